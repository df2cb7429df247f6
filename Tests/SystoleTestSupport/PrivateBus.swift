import Foundation
import Synchronization

/// A dbus-daemon of the test's own, on a socket in a temporary folder: tests never touch the machine's buses.
public final class PrivateBus: @unchecked Sendable {
    /// The bus address (`unix:path=…`).
    public let address: String
    private let process: ChildProcess
    private let lifeline: Pipe
    /// dbus-daemon's process, killed by `stop()` itself: the lifeline alone is not enough (see `stop()`).
    private let daemonPID: pid_t
    private let stopped = Atomic(false)
    private let directory: URL

    public struct StartFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts `dbus-daemon` with a session-bus policy and waits until it accepts connections.
    ///
    /// - Parameter extraPolicy: more `<deny …/>`/`<allow …/>` rules for the default policy, e.g. to refuse calls
    ///   to `org.bluez` as a system bus does for users outside group `bluetooth`.
    /// Starts the daemon on a thread of its own (see `offThePool`): starting it blocks until it listens.
    ///
    /// - Parameter extraConfiguration: more elements for `<busconfig>` after the default policy, e.g. the
    ///   policies of a file from `systemd/`.
    public static func start(extraPolicy: String = "", extraConfiguration: String = "") async throws -> PrivateBus {
        try await offThePool { try PrivateBus(extraPolicy: extraPolicy, extraConfiguration: extraConfiguration) }
    }

    /// Starts `dbus-daemon` with the policies of the machine's own system bus configuration
    /// (`/usr/share/dbus-1/system.conf`: method calls and name ownership denied, signals delivered to all) and
    /// `extraConfiguration` after them, as `/etc/dbus-1/system.d/` files come after them on a real system bus.
    /// Only the policies are taken: the bus listens on a socket of its own and runs as the test's user.
    public static func startLikeSystemBus(extraConfiguration: String) async throws -> PrivateBus {
        let systemConfiguration = "/usr/share/dbus-1/system.conf"
        guard let text = try? String(contentsOfFile: systemConfiguration, encoding: .utf8) else {
            throw StartFailed(description: "\(systemConfiguration) is missing: install the 'dbus' package")
        }
        let policies = Self.policies(in: text)
        guard !policies.isEmpty else {
            throw StartFailed(description: "\(systemConfiguration) has no <policy> elements")
        }
        return try await offThePool {
            try PrivateBus(configuration: { socket in
                """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>unix:path=\(socket)</listen>
                  <auth>EXTERNAL</auth>
                  \(policies.joined(separator: "\n"))
                  \(extraConfiguration)
                </busconfig>
                """
            })
        }
    }

    /// The `<policy …>…</policy>` elements of a bus configuration, comments removed.
    public static func policies(in configuration: String) -> [String] {
        let text = configuration.replacingOccurrences(
            of: "<!--[\\s\\S]*?-->",
            with: "",
            options: .regularExpression
        )
        var policies: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "<policy "), let end = rest[start.lowerBound...].range(of: "</policy>") {
            policies.append(String(rest[start.lowerBound..<end.upperBound]))
            rest = rest[end.upperBound...]
        }
        return policies
    }

    public convenience init(extraPolicy: String = "", extraConfiguration: String = "") throws {
        try self.init(configuration: { socket in
            Self.configuration(socket: socket, extraPolicy: extraPolicy, extraConfiguration: extraConfiguration)
        })
    }

    private init(configuration: (String) -> String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("systole-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Other users' processes (the policy test's) reach the socket through this folder.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let socket = directory.appendingPathComponent("bus").path
        let config = directory.appendingPathComponent("bus.conf")
        try configuration(socket).write(to: config, atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            throw StartFailed(description: "/usr/bin/dbus-daemon is missing: install the 'dbus' package")
        }
        // dbus-daemon ignores SIGTERM, and a test process that crashes must not leave buses behind: a shell
        // holds the daemon and kills it as soon as our end of its stdin closes (on stop() or on our death).
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            #"/usr/bin/dbus-daemon --config-file="$1" --nofork --print-address=1 & pid=$!; echo "$pid"; read _; kill -9 $pid"#,
            "private-bus", config.path,
        ]
        let output = Pipe()
        lifeline = Pipe()
        process.standardInput = lifeline
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The shell prints dbus-daemon's pid, and dbus-daemon its address once the socket is listening, in
        // either order.
        let lines = [output.fileHandleForReading.availableLine(), output.fileHandleForReading.availableLine()]
            .compactMap { $0 }
        guard let pid = lines.lazy.compactMap({ pid_t($0) }).first,
            let line = lines.first(where: { $0.hasPrefix("unix:") })
        else {
            try? lifeline.fileHandleForWriting.close()
            throw StartFailed(description: "dbus-daemon did not start (printed \(lines))")
        }
        daemonPID = pid
        address = line
    }

    /// The configuration of a session-like bus where everything is allowed.
    static func configuration(socket: String, extraPolicy: String, extraConfiguration: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            \(extraPolicy)
          </policy>
          \(extraConfiguration)
        </busconfig>
        """
    }

    /// Stops the daemon (every connection on it sees the bus disappear a moment later).
    ///
    /// It does not wait for the daemon to exit, so it never blocks: the holding shell kills it as soon as it
    /// reads the end of its stdin.
    ///
    /// dbus-daemon is killed here, not only through the lifeline: a process another test spawns at the moment
    /// the lifeline is created can inherit its write end (Foundation closes the descriptors it saw open when it
    /// started spawning, not one opened meanwhile), and then closing ours is no end of file: the bus lived on and
    /// a daemon waiting for it to disappear waited in vain (a rare failure under parallel tests).
    public func stop() {
        // Once only: a second kill could hit another process that got the pid since.
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        kill(daemonPID, SIGKILL)
        try? lifeline.fileHandleForWriting.close()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

extension FileHandle {
    /// Reads up to the first newline.
    fileprivate func availableLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = readData(ofLength: 1)
            guard let byte = chunk.first else { break }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
