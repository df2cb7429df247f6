import ArgumentParser
import BlueZ
import Foundation
import HeartRateProfile

/// `systole scan`: list heart-rate sensors in range.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List Bluetooth LE heart-rate sensors in range (address, name, maker, RSSI, paired).",
        discussion: """
            Discovers devices advertising the Heart Rate service (0x180D) for --seconds, through bluetoothd. \
            Wake a chest strap first: wet the electrodes and put it on.
            """
    )

    @OptionGroup var bluetooth: BluetoothOptions

    @Option(help: "How long to scan, in seconds.")
    var seconds: Double = 5

    @Flag(help: "Print one JSON object per sensor.")
    var json = false

    func validate() throws {
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be between 0 and 600") }
    }

    func run() async throws {
        let client = try await bluetooth.connect()
        defer {
            client.close()
            client.connection.close()
        }
        let adapter = try bluetooth.selectAdapter(client)
        do {
            try await adapter.setDiscoveryFilter(uuids: [.heartRateService], transport: .le)
            try await adapter.startDiscovery()
        } catch {
            throw BluetoothOptions.failure(error)
        }
        try? await Task.sleep(for: .seconds(seconds))
        // Read what discovery saw before stopping it: BlueZ drops RSSI when discovery stops.
        let sensors = adapter.devices.filter(\.isHeartRateSensor).map(SensorListing.init)
        try? await adapter.stopDiscovery()
        for sensor in sensors.sorted(by: { ($0.rssi ?? -128) > ($1.rssi ?? -128) }) {
            print(json ? sensor.jsonLine() : sensor.textLine())
        }
        if sensors.isEmpty, !json {
            printError(
                "no heart-rate sensors found on \(adapter.name) in \(seconds) s: wake the sensor (wear it) and "
                    + "try again"
            )
        }
    }
}

/// One sensor as `scan` lists it.
struct SensorListing: Encodable {
    var address: String
    var name: String?
    var manufacturer: String?
    var rssi: Int16?
    var paired: Bool
    var connected: Bool

    init(_ device: BluetoothDevice) {
        address = device.address?.description ?? device.path
        name = device.name
        manufacturer = device.manufacturerName
        rssi = device.rssi
        paired = device.isPaired
        connected = device.isConnected
    }

    func textLine() -> String {
        var parts = [address, name ?? "(no name)"]
        if let manufacturer { parts.append(manufacturer) }
        parts.append(rssi.map { "\($0) dBm" } ?? "RSSI unknown")
        if paired { parts.append("paired") }
        if connected { parts.append("connected") }
        return parts.joined(separator: " · ")
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    enum CodingKeys: String, CodingKey { case address, name, manufacturer, rssi, paired, connected }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(name, forKey: .name)
        try container.encode(manufacturer, forKey: .manufacturer)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(paired, forKey: .paired)
        try container.encode(connected, forKey: .connected)
    }
}
