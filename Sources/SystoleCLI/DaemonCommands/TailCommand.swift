import ArgumentParser
import ControlAPI
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `systole tail [-f] [--json]`: the live bpm log systoled writes, in either form whatever form the file has.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Show the live bpm log (the last lines, or follow it with -f).",
        discussion: """
            Reads the file systoled writes (live_log.path in its configuration). Follows rotation. Each line has \
            the time, sensor, bpm, contact, RR intervals in ms, energy, and the workout's state and elapsed time; \
            without a heart rate, only the workout's state and time.
            """
    )

    @Flag(name: .shortAndLong, help: "Keep printing lines as they are written.") var follow = false
    @Flag(help: "Print JSON lines.") var json = false
    @Option(name: [.customShort("n"), .long], help: "How many of the last lines to print first.") var lines = 10
    @Option(help: "The live log.") var file = "/var/log/systole/live.log"

    func validate() throws {
        guard lines >= 0 else { throw ValidationError("--lines takes 0 or more") }
    }

    func run() async throws {
        let handle = try Self.open(file)
        let existing = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        for line in existing.split(separator: "\n").suffix(lines) { emit(String(line)) }
        guard follow else { return }
        var current = handle
        var identity = Self.identity(file)
        var partial = ""
        while !Task.isCancelled {
            let data = current.availableData
            if data.isEmpty {
                try await Task.sleep(for: .milliseconds(50))
                // Rotated: the path now names a new file; read the rest of the old one, then follow the new.
                if let now = Self.identity(file), now != identity, let next = FileHandle(forReadingAtPath: file) {
                    current = next
                    identity = now
                }
                continue
            }
            partial += String(decoding: data, as: UTF8.self)
            while let newline = partial.firstIndex(of: "\n") {
                emit(String(partial[..<newline]))
                partial = String(partial[partial.index(after: newline)...])
            }
        }
    }

    /// The live log opened for reading, or a failure that says why not. The error comes from open(2) itself: the
    /// log's folder is closed to users outside group systole, and to them the file looks missing to a stat.
    static func open(_ path: String) throws -> FileHandle {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor < 0 else { return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true) }
        switch errno {
        case EACCES, EPERM:
            throw CommandFailure.invalidInput(
                "cannot read \(path): permission denied. The live log holds heart rate, so only group 'systole' "
                    + "may read it: run as a member (sudo usermod -aG systole $USER, then log in again), or as root"
            )
        case ENOENT:
            throw CommandFailure.invalidInput(
                "\(path) does not exist: is systoled running, and is --file its live_log.path?"
            )
        case let code:
            throw CommandFailure.invalidInput(
                "cannot read \(path): \(String(cString: strerror(code))); --file takes the live log, live_log.path in "
                    + "systoled's configuration"
            )
        }
    }

    static func identity(_ path: String) -> UInt64? {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    private func emit(_ line: String) {
        guard !line.isEmpty else { return }
        let shown =
            json
            ? (line.hasPrefix("{") ? line : LiveLogText.json(fromText: line))
            : (line.hasPrefix("{") ? LiveLogText.text(fromJSON: line) : line)
        // Written straight to the descriptor, so a pipe sees each line at once.
        FileHandle.standardOutput.write(Data((shown + "\n").utf8))
    }
}

/// Converts live-log lines between the text and JSON forms systoled writes.
enum LiveLogText {
    /// `TIME [SENSOR] key=value …` as a JSON object with typed values.
    static func json(fromText line: String) -> String {
        let tokens = line.split(separator: " ").map(String.init)
        var object: [String: Any] = [:]
        guard let time = tokens.first else { return "{}" }
        object["time"] = time
        for token in tokens.dropFirst() {
            guard let equals = token.firstIndex(of: "=") else {
                object["sensor"] = token
                continue
            }
            let key = String(token[..<equals])
            let value = String(token[token.index(after: equals)...])
            switch key {
            case "bpm": object["bpm"] = Int(value) ?? value
            case "contact": object["contact"] = value == "yes"
            case "rr": object["rr"] = value.split(separator: ",").compactMap { Double($0) }
            case "energy": object["energy"] = Int(value.replacingOccurrences(of: "kJ", with: "")) ?? value
            case "elapsed":
                let parts = value.split(separator: ":").compactMap { Double($0) }
                object["elapsed"] = parts.count == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2] : 0
            default: object[key] = value
            }
        }
        if object["sensor"] != nil {
            if object["contact"] == nil { object["contact"] = NSNull() }
            if object["energy"] == nil { object["energy"] = NSNull() }
            if object["rr"] == nil { object["rr"] = [Double]() }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON line in the text form.
    static func text(fromJSON line: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return line
        }
        var parts = [object["time"] as? String ?? "?"]
        if let sensor = object["sensor"] as? String { parts.append(sensor) }
        if let bpm = object["bpm"] as? Int { parts.append("bpm=\(bpm)") }
        if let contact = object["contact"] as? Bool { parts.append("contact=\(contact ? "yes" : "no")") }
        if let rr = object["rr"] as? [Double], !rr.isEmpty {
            parts.append("rr=" + rr.map(WorkoutText.whole).joined(separator: ","))
        }
        if let energy = object["energy"] as? Int { parts.append("energy=\(energy)kJ") }
        if let state = object["state"] as? String { parts.append("state=\(state)") }
        if let elapsed = object["elapsed"] as? Double { parts.append("elapsed=\(formatElapsed(elapsed))") }
        return parts.joined(separator: " ")
    }
}
