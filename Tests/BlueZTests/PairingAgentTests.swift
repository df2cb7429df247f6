import BlueZSimulator
import DBus
import HeartRateProfile
import SystoleTestSupport
import Testing

@testable import BlueZ

/// `PairingAgent` against the simulator: not the default agent while idle, HID never. (A pairing window, which a
/// sensor opens, is tested with the sensor in HeartRateSensorsTests.)
@Suite struct PairingAgentTests {
    @Test func outsideAPairingEveryRequestIsRefusedAndHIDAlways() async throws {
        try await withSimulator(.earbudsAndKeyboard()) { bt in
            let agent = PairingAgent()
            try await agent.register(with: bt.client)
            #expect(await bt.simulator.defaultAgentOwner == nil, "registering does not make it the default")
            let keyboard = await bt.simulator.sensorAddresses[1]
            await #expect(throws: DBusError.self) {
                try await bt.simulator.askDefaultAgent("RequestAuthorization", device: keyboard)
            }
            for request in ["RequestConfirmation", "RequestAuthorization", "AuthorizeService"] {
                #expect(agent.refusal(request, device: "/org/bluez/hci0/dev_DC_2C_26_00_00_01") != nil)
            }
            #expect(
                agent.refusal("AuthorizeService", device: "/any", service: BluetoothUUID(0x1124))?.contains("input")
                    == true
            )
            #expect(agent.refusal("AuthorizeService", device: "/any", service: BluetoothUUID(0x1812)) != nil)
        }
    }
}
