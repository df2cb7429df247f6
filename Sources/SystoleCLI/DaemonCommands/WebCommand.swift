import ArgumentParser

/// `systole web`: the address of systoled's web page with its token, to open in a browser or an OBS browser source.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Print the address of the live web page (with its token); --overlay for the stream overlay.",
        discussion: """
            The page shows the current heart rate, the workout and the sensors, and the finished workouts; the \
            overlay shows only the bpm on a transparent background (add &zone for the zone's colour). It needs \
            [http] in systoled.toml; see docs/operations.md. The token in the address lets anyone who has it \
            see your heart rate: share it as you would a password.
            """
    )
    @OptionGroup var daemon: ControlOptions
    @Flag(help: "Print the overlay's address (for an OBS browser source).") var overlay = false

    func run() async throws {
        let address = try await daemon.connect().call("GetWebPage").first?.string ?? ""
        print(overlay ? address.replacingOccurrences(of: "/#token=", with: "/overlay#token=") : address)
    }
}
