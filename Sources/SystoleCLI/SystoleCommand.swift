import ArgumentParser

/// The `systole` command: the root of every subcommand.
public struct SystoleCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "systole",
        abstract: "Record workouts from Bluetooth LE heart-rate sensors.",
        discussion: """
            Today systole can list heart-rate sensors in range (scan), connect to one through bluetoothd and \
            print its measurements live (monitor), and decode Heart Rate Measurement payloads (characteristic \
            0x2A37), e.g. ones copied from bluetoothctl or btmon while a sensor misbehaves.

            Exit status: 0 on success, 1 when the input was understood but is not valid (e.g. a malformed \
            payload, no sensor found, bluetoothd not running), 2 for usage errors (unknown options, text that is not hex).
            """,
        version: SystoleVersion.current,
        subcommands: [ScanCommand.self, MonitorCommand.self, DecodeCommand.self]
    )

    public init() {}
}
