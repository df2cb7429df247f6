import Foundation
import Glibc

/// A real mosquitto (Debian's) in a folder of the test's, on a port of its own, with one user and password,
/// started in the foreground and stopped by the test; never the machine's own broker or service.
public final class MosquittoBroker: @unchecked Sendable {
    public let folder: URL
    public let port: Int
    public let user = "systoled"
    public let password = "broker-secret-0123"
    /// The TLS listener's port, when there is one; its certificate is for 127.0.0.1, signed by `caFile`.
    public let tlsPort: Int?
    /// The test CA that signed the TLS listener's certificate.
    public var caFile: String { folder.appendingPathComponent("ca.pem").path }
    /// Where it logs connections and errors (TLS handshakes that failed among them).
    public var logPath: String { folder.appendingPathComponent("mosquitto.log").path }
    private var process: ChildProcess?

    public struct StartFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// With `tls`, a second listener speaks TLS with a certificate made here (openssl) by a CA of the test's own.
    public init(folder: URL, port: Int = freeTCPPort(), tls: Bool = false) throws {
        self.folder = folder
        self.port = port
        tlsPort = tls ? freeTCPPort() : nil
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Started as root, mosquitto runs as its own user: it must read its files.
        chmod(folder.path, 0o755)
        let passwords = folder.appendingPathComponent("passwords").path
        _ = FileManager.default.createFile(atPath: passwords, contents: Data())
        let made = try CommandRunner.runBlocking("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
        guard made.status == 0 else { throw StartFailed(description: "mosquitto_passwd: \(made.standardError)") }
        chmod(passwords, 0o644)
        // mosquitto, running as its own user, appends to a log the test made for it.
        _ = FileManager.default.createFile(atPath: logPath, contents: Data())
        chmod(logPath, 0o666)
        var configuration = """
            per_listener_settings false
            allow_anonymous false
            password_file \(passwords)
            persistence false
            log_dest file \(logPath)
            log_type error
            log_type warning
            log_type notice
            connection_messages true
            listener \(port) 127.0.0.1

            """
        if let tlsPort {
            try makeTestCertificates(in: folder)
            configuration += """
                listener \(tlsPort) 127.0.0.1
                cafile \(caFile)
                certfile \(folder.appendingPathComponent("server.pem").path)
                keyfile \(folder.appendingPathComponent("server.key").path)

                """
        }
        try configuration.write(to: folder.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        chmod(folder.appendingPathComponent("mosquitto.conf").path, 0o644)
    }

    /// What it logged so far.
    public func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts it and waits until it accepts connections.
    public func start() async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", folder.appendingPathComponent("mosquitto.conf").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let listening = await eventually { Self.accepts(port: port) || !process.isRunning }
        if listening, process.isRunning { return }
        throw StartFailed(description: "mosquitto did not listen on 127.0.0.1:\(port)")
    }

    /// Stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit.
    public func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
