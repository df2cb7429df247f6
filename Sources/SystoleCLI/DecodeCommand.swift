import ArgumentParser
import HeartRateProfile

/// `systole decode HEX [--json]`: decode one Heart Rate Measurement payload.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one Heart Rate Measurement (0x2A37) payload given as hex.",
        discussion: """
            Bytes may be separated by spaces or colons, as bluetoothctl and btmon print them, e.g.
              systole decode "16 48 54 01 EC 02"
              systole decode 16:48:54:01:EC:02 --json
            A payload whose heart-rate field is missing exits with status 1; text that is not hex exits with 2.
            """
    )

    @Argument(
        help: ArgumentHelp("The payload as hex.", valueName: "hex")
    )
    var hex: [String]

    @Flag(help: "Print one JSON object instead of a line of text.")
    var json = false

    func validate() throws {
        if hex.isEmpty {
            throw ValidationError("missing payload: give the bytes as hex, e.g. systole decode 06 48")
        }
    }

    func run() throws {
        let bytes: [UInt8]
        do {
            bytes = try Hex.decode(hex.joined(separator: " "))
        } catch {
            throw CommandFailure.usage("decode: \(error)")
        }
        let measurement: HeartRateMeasurement
        do {
            measurement = try HeartRateMeasurement(decoding: bytes)
        } catch {
            throw CommandFailure.invalidInput("decode: invalid Heart Rate Measurement: \(error)")
        }
        if json {
            print(MeasurementJSON(measurement).encodedLine())
        } else {
            print(MeasurementText.line(for: measurement))
        }
    }
}
