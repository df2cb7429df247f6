import ArgumentParser

/// The `systole` command: the root of every subcommand.
public struct SystoleCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "systole",
        abstract: "Record workouts from Bluetooth LE heart-rate sensors.",
        discussion: """
            Workouts run in systoled, the daemon: start, pause, resume, end or cancel one, add water or energy \
            to it, and read its status, the live bpm log (tail), the sensors, finished workouts and statistics. \
            These commands talk to systoled over D-Bus (--bus, or $SYSTOLE_BUS; default the system bus).

            Without the daemon, systole can list heart-rate sensors in range (scan), connect to one through \
            bluetoothd and print its measurements live (monitor), and decode Heart Rate Measurement payloads \
            (characteristic 0x2A37), e.g. ones copied from bluetoothctl or btmon while a sensor misbehaves.

            Exit status: 0 on success, 1 when the input was understood but is not valid (e.g. a malformed \
            payload, no sensor found, bluetoothd or systoled not running, a workout already ongoing), 2 for \
            usage errors (unknown options, text that is not hex).
            """,
        version: SystoleVersion.current,
        subcommands: [
            StartCommand.self, PauseCommand.self, ResumeCommand.self, EndCommand.self, CancelCommand.self,
            AddCommand.self, StatusCommand.self, TailCommand.self, SensorsCommand.self, PairCommand.self,
            ForgetCommand.self, WorkoutsCommand.self, StatsCommand.self, ScanCommand.self, MonitorCommand.self,
            DecodeCommand.self, LapCommand.self, MarkerCommand.self, ExportCommand.self, ImportCommand.self,
            TrendsCommand.self,
            ProfileCommand.self,
            WebCommand.self,
        ]
    )

    public init() {}
}
