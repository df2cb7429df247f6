import Foundation
import Glibc

/// A real PostgreSQL (Debian's) with a data folder of the test's, on a port of its own, started and stopped by the
/// test and run as user `postgres` (PostgreSQL refuses root; a test run by another user runs it as that user).
/// Never the machine's own cluster or service. It has a role `systole` with a password, owning database
/// `systole`.
public final class PostgresServer: @unchecked Sendable {
    public let folder: URL
    public let port: Int
    public let user = "systole"
    public let password = "replica-secret-0123"
    public let database = "systole"
    private let superPassword = "super-secret-0123"
    private var process: ChildProcess?
    private let binaries: URL

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    /// The address systoled's `[replication] postgres` takes (the password is given apart).
    public var address: String { "postgresql://\(user)@127.0.0.1:\(port)/\(database)" }
    /// The same with the password, for `systole --database`.
    public var addressWithPassword: String { "postgresql://\(user):\(password)@127.0.0.1:\(port)/\(database)" }

    private var dataFolder: String { folder.appendingPathComponent("data").path }

    /// The test CA that signed the server's certificate (with `tls`).
    public var caFile: String { folder.appendingPathComponent("certificates/ca.pem").path }
    /// Whether the server speaks TLS (a certificate for 127.0.0.1 signed by ``caFile``).
    public let tls: Bool

    /// Makes the cluster (initdb) and the role and database, and starts the server. With `tls`, it also speaks
    /// TLS with a certificate made here (openssl) by a CA of the test's own.
    public init(folder: URL, port: Int = freeTCPPort(), tls: Bool = false) async throws {
        self.folder = folder
        self.port = port
        self.tls = tls
        let versions =
            (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.compactMap(Int.init).sorted()
            ?? []
        guard let version = versions.last else {
            throw Failed(
                description: "PostgreSQL is not installed (/usr/lib/postgresql/N/bin): run scripts/install-deps.sh"
            )
        }
        binaries = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let passwordFile = folder.appendingPathComponent("superuser-password").path
        try superPassword.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        try handOver(folder.path)
        try handOver(passwordFile)
        let made = try await run(
            binaries.appendingPathComponent("initdb").path,
            [
                "-D", dataFolder, "-U", "postgres", "--pwfile", passwordFile, "--auth-host", "scram-sha-256",
                "--auth-local", "scram-sha-256", "-E", "UTF8", "--no-sync",
            ]
        )
        guard made.status == 0 else { throw Failed(description: "initdb: \(made.standardError)") }
        if tls {
            let certificates = folder.appendingPathComponent("certificates")
            try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: true)
            try makeTestCertificates(in: certificates)
            // PostgreSQL wants its key readable by its own user alone.
            let key = certificates.appendingPathComponent("server.key").path
            try handOver(key)
            chmod(key, 0o600)
        }
        try await start()
        for statement in [
            "CREATE ROLE \(user) LOGIN PASSWORD '\(password)'",
            "CREATE DATABASE \(database) OWNER \(user)",
        ] {
            _ = try await superQuery(statement, database: "postgres")
        }
    }

    /// Starts the server and waits until it accepts connections (30 s at most).
    public func start() async throws {
        let process = ChildProcess()
        let (executable, arguments) = asPostgres(
            binaries.appendingPathComponent("postgres").path,
            [
                "-D", dataFolder, "-p", String(port), "-k", folder.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "logging_collector=off", "-c", "log_min_messages=fatal",
            ]
                + (tls
                    ? [
                        "-c", "ssl=on",
                        "-c", "ssl_cert_file=" + folder.appendingPathComponent("certificates/server.pem").path,
                        "-c", "ssl_key_file=" + folder.appendingPathComponent("certificates/server.key").path,
                    ] : [])
        )
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let up = await eventually(every: .milliseconds(100)) {
            guard process.isRunning else { return true }
            guard MosquittoBroker.accepts(port: port) else { return false }
            let answer = try? await superQuery("SELECT 1", database: "postgres")
            return answer?.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        if up, process.isRunning { return }
        throw Failed(description: "PostgreSQL did not start on 127.0.0.1:\(port)")
    }

    /// Stops it with a fast shutdown (SIGINT: open connections are cut, what was committed stays) and waits.
    public func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Runs SQL as the role `systole` in its database; returns psql's unaligned, tuples-only output (`|` between
    /// columns, a line per row).
    public func query(_ sql: String) async throws -> String {
        let result = try await run(
            "/usr/bin/psql",
            [addressWithPassword, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            asPostgres: false
        )
        guard result.status == 0 else { throw Failed(description: "psql: \(result.standardError)") }
        return result.standardOutput
    }

    private func superQuery(_ sql: String, database: String) async throws -> String {
        let address = "postgresql://postgres:\(superPassword)@127.0.0.1:\(port)/\(database)"
        let result = try await run(
            "/usr/bin/psql",
            [address, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            asPostgres: false
        )
        guard result.status == 0 else { throw Failed(description: "psql: \(result.standardError)") }
        return result.standardOutput
    }

    /// The same command as user `postgres` when this process is root (setpriv), as is otherwise.
    private func asPostgres(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard getuid() == 0 else { return (executable, arguments) }
        return (
            "/usr/bin/setpriv",
            ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", executable] + arguments
        )
    }

    private func run(
        _ executable: String,
        _ arguments: [String],
        asPostgres: Bool = true
    ) async throws
        -> CommandRunner.Result
    {
        let (path, list) = asPostgres ? self.asPostgres(executable, arguments) : (executable, arguments)
        return try await CommandRunner.run(path, list)
    }

    /// Gives the file or folder to user `postgres` when this process is root.
    private func handOver(_ path: String) throws {
        guard getuid() == 0 else { return }
        guard let entry = getpwnam("postgres") else {
            throw Failed(description: "there is no user 'postgres' (Debian's postgresql package makes it)")
        }
        guard chown(path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
            throw Failed(description: "cannot give \(path) to user postgres: errno \(errno)")
        }
    }

    deinit { stop() }
}
