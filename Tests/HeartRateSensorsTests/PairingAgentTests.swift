import BlueZ
import BlueZSimulator
import DBus
import HeartRateProfile
import SystoleTestSupport
import Testing

@testable import HeartRateSensors

/// `PairingAgent` against the simulator: not the default agent while idle, HID never. (A pairing window, which a
/// sensor opens, is tested with the sensor in SensorPairingTests.)
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

    @Test func pairingNeedsAnAgentAndOursDoesJustWorks() async throws {
        try await withSimulator(scenario(.powerbeatsPro2)) { bt in
            let adapter = try bt.client.adapter(named: nil)
            let device = try await bt.discoverFirstDevice(on: adapter)
            #expect(adapter.isPairable == false)

            let noAgent = await #expect(throws: BlueZError.self) { try await device.pair() }
            #expect(noAgent?.kind == .authenticationFailed)
            #expect(!device.isPaired)

            let agent = PairingAgent()
            try await agent.register(with: bt.client)
            #expect(await eventually { adapter.isPairable })
            try await device.pair()
            #expect(await eventually { device.isPaired && device.isBonded })
            let again = await #expect(throws: BlueZError.self) { try await agent.register(with: bt.client) }
            #expect(again?.kind == .alreadyExists)
            try await device.setTrusted(true)
            #expect(await eventually { device.isTrusted })
            try await device.remove()
            #expect(await eventually { !device.exists })
        }
    }
}
