import ArgumentParser
import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors

/// `systole scan`: list heart-rate sensors in range.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List Bluetooth LE heart-rate sensors in range (address, name, maker, RSSI, paired).",
        discussion: """
            Discovers devices advertising the Heart Rate service (0x180D) for --seconds, through bluetoothd, on \
            every powered adapter (or --adapter); with several, each sensor says which adapter sees it. Wake a \
            chest strap first: wet the electrodes and put it on.
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
        let adapters = try bluetooth.selectAdapters(client)
        var discovering: [Adapter] = []
        for adapter in adapters {
            do {
                try await adapter.setDiscoveryFilter(uuids: [.heartRateService], transport: .le)
                try await adapter.startDiscovery()
                discovering.append(adapter)
            } catch {
                // One adapter that cannot scan should not hide what the others see.
                guard adapters.count > 1 else { throw BluetoothOptions.failure(error) }
                printError("systole: warning: cannot scan on \(adapter.name): \(error.message)")
            }
        }
        guard !discovering.isEmpty else {
            throw CommandFailure.invalidInput("no adapter could scan (\(adapters.map(\.name).joined(separator: ", ")))")
        }
        try? await Task.sleep(for: .seconds(seconds))
        // Read what discovery saw before stopping it: BlueZ drops RSSI when discovery stops.
        let showsAdapter = adapters.count > 1
        let sensors = discovering.flatMap { adapter in
            adapter.devices.filter(\.isHeartRateSensor).map {
                SensorListing($0, adapter: adapter.name, showsAdapter: showsAdapter)
            }
        }
        for adapter in discovering { try? await adapter.stopDiscovery() }
        for sensor in sensors.sorted(by: { ($0.rssi ?? -128) > ($1.rssi ?? -128) }) {
            print(json ? sensor.jsonLine() : sensor.textLine())
        }
        if sensors.isEmpty, !json {
            printError(
                "no heart-rate sensors found on \(discovering.map(\.name).joined(separator: ", ")) in \(seconds) s: "
                    + "wake the sensor (wear it) and try again"
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
    /// The adapter that sees it (`hci0`).
    var adapter: String
    /// Whether the text form names the adapter: only when there are several.
    var showsAdapter: Bool

    init(_ device: BluetoothDevice, adapter: String, showsAdapter: Bool = false) {
        self.adapter = adapter
        self.showsAdapter = showsAdapter
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
        if showsAdapter { parts.append("on \(adapter)") }
        return parts.joined(separator: " · ")
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    enum CodingKeys: String, CodingKey { case address, name, manufacturer, rssi, paired, connected, adapter }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(name, forKey: .name)
        try container.encode(manufacturer, forKey: .manufacturer)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(paired, forKey: .paired)
        try container.encode(connected, forKey: .connected)
        try container.encode(adapter, forKey: .adapter)
    }
}
