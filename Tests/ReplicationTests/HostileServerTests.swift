import Foundation
import SystoleTestSupport
import Testing

@testable import Replication

/// A hostile or impersonating server (what a real PostgreSQL will not do, so a fake one on loopback): a message
/// too long to be PostgreSQL's closes the connection before it is gathered, no password leaves in clear text or
/// as MD5 unless the address accepts it, a server that never proves itself is refused, bytes injected before TLS
/// are refused, and a silent server is given up on. Each refusal says what the server did.
@Suite struct HostileServerTests {
    /// Reads the central database at `server` the way `systole … --database` does; returns the error's words.
    func refusal(
        _ server: HostilePostgres,
        options: String = "",
        password: String = "never-to-be-seen"
    ) async throws -> String {
        let address = try PostgresAddress(
            parsing: "postgresql://systole:\(password)@127.0.0.1:\(server.port)/systole\(options)"
        )
        do {
            _ = try await CentralDatabase.with(address, password: nil) { try await $0.workouts() }
            Issue.record("the hostile server was read")
            return ""
        } catch {
            return Replicator.describe(error)
        }
    }

    @Test func aMessageLongerThanTheLimitIsRefusedBeforeItIsGathered() async throws {
        let server = try HostilePostgres(.hugeError(length: 0x1000_0000))
        defer { server.stop() }
        let reason = try await refusal(server)
        #expect(reason.contains("a message of 268435456 bytes"), "\(reason)")
        // What the server got into the socket before systole closed it: the kernel's buffers, not the message.
        #expect(server.recorded.mostBytesSent < 16 << 20, "\(server.recorded.mostBytesSent) bytes sent")
    }

    @Test func noPasswordInClearTextOrAsMD5UnlessTheAddressSaysSo() async throws {
        let cleartext = try HostilePostgres(.cleartextPassword)
        defer { cleartext.stop() }
        let reason = try await refusal(cleartext)
        #expect(reason.contains("password in clear text"), "\(reason)")
        #expect(cleartext.recorded.connections == 1 && cleartext.recorded.passwords.isEmpty)

        let md5 = try HostilePostgres(.md5Password)
        defer { md5.stop() }
        #expect(try await refusal(md5).contains("MD5 password, which is not accepted"))
        #expect(md5.recorded.passwords.isEmpty)
        // Accepted when the address says so: the server gets the MD5 hash (never the password itself).
        _ = try await refusal(md5, options: "?require_auth=scram-sha-256,md5")
        let given = try #require(md5.recorded.passwords.first)
        #expect(String(decoding: given, as: UTF8.self).hasPrefix("md5"))
        #expect(!String(decoding: given, as: UTF8.self).contains("never-to-be-seen"))

        // Clear text is refused by the address itself without verified TLS.
        #expect(throws: PostgresAddress.Problem.self) {
            try PostgresAddress(parsing: "postgresql://u@127.0.0.1/d?require_auth=password")
        }
    }

    @Test func aServerThatNeverProvesItselfIsRefused() async throws {
        let trust = try HostilePostgres(.trust)
        defer { trust.stop() }
        let reason = try await refusal(trust)
        #expect(reason.contains("without asking for a password"), "\(reason)")

        let skipped = try HostilePostgres(.scramWithoutProof)
        defer { skipped.stop() }
        let unproven = try await refusal(skipped)
        #expect(unproven.contains("without proving it knows the password"), "\(unproven)")
    }

    @Test func bytesBeforeTLSAreRefused() async throws {
        let server = try HostilePostgres(.tlsWithInjectedBytes)
        defer { server.stop() }
        let reason = try await refusal(server, options: "?sslmode=require")
        #expect(reason.contains("answered the TLS request with"), "\(reason)")
    }

    @Test func aSilentServerIsGivenUpOn() async throws {
        let server = try HostilePostgres(.silent)
        defer { server.stop() }
        let reason = try await refusal(server)
        #expect(reason.contains("no answer within"), "\(reason)")
    }
}
