import Testing

@testable import Replication

/// libpq's connection URIs as `[replication] postgres` and `--database` take them, and what they refuse.
@Suite struct PostgresAddressTests {
    @Test func theFormsLibpqWritesAreRead() throws {
        let full = try PostgresAddress(
            parsing:
                "postgresql://coach:p%40ss%3Aword@db.example.org:6543/gym?sslmode=verify-full&sslrootcert=/etc/ca.pem"
        )
        #expect(full.host == "db.example.org" && full.port == 6543 && full.database == "gym")
        #expect(full.username == "coach" && full.password == "p@ss:word")
        #expect(full.tls == .verifyFull && full.caFile == "/etc/ca.pem")

        let plain = try PostgresAddress(parsing: "postgres://systole@10.0.0.5/systole")
        #expect(plain.port == 5432 && plain.password == nil && plain.tls == .verifyFull, "off loopback, TLS by default")
        let local = try PostgresAddress(parsing: "postgresql://systole@127.0.0.1:5433/systole")
        #expect(local.tls == .disable, "loopback needs no TLS")
        let v6 = try PostgresAddress(parsing: "postgresql://u@[::1]:7000/d?sslmode=require")
        #expect(v6.host == "::1" && v6.port == 7000 && v6.tls == .require)
        let bare = try PostgresAddress(parsing: "postgresql://localhost")
        #expect(bare.username == nil && bare.database == nil && bare.tls == .disable)
        // Loopback is an address, not a name that looks like one: these are other machines, so TLS by default.
        for host in ["127.example.org", "127.0.0.1.example.org", "::2"] {
            let remote = try PostgresAddress(parsing: "postgresql://u@\(host.contains(":") ? "[\(host)]" : host)/d")
            #expect(remote.tls == .verifyFull, "\(host)")
        }
        #expect(try PostgresAddress(parsing: "postgresql://u@127.8.9.10/d").tls == .disable)
    }

    @Test(arguments: [
        ("mysql://u@h/d", "starts with postgresql://"),
        ("postgresql://u@/d", "the host is missing"),
        ("postgresql://u@h:99999/d", "from 1 to 65535"),
        ("postgresql://u@h:x/d", "must be a number"),
        ("postgresql://u@bad_host/d", "not a host name"),
        ("postgresql://u@h/d?sslmode=prefer", "sslmode is disable, require or verify-full"),
        ("postgresql://u@h/d?application_name=x", "takes sslmode, sslrootcert and require_auth"),
        ("postgresql://u@h/d?require_auth=gss", "require_auth takes scram-sha-256, md5, password, none"),
        ("postgresql://u@127.0.0.1/d?require_auth=scram-sha-256,password", "only with sslmode=verify-full"),
        ("postgresql://u@h/d?sslmode=require&sslrootcert=/ca.pem", "sslrootcert is for sslmode=verify-full"),
        ("postgresql://u@h/d?sslmode=verify-full&sslrootcert=ca.pem", "absolute path"),
        ("postgresql://u%0A@h/d", "not valid percent-encoded text"),
        ("postgresql://u@[::1/d", "needs its ]"),
        ("postgresql://u@h/d\u{1B}[31m", "printable"),
        ("postgresql://u@fe80::1/d", "not a host name"),
        ("postgresql://u@[fe80::zz]/d", "not a host name"),
    ])
    func mistakesAreNamed(address: String, expected: String) {
        do {
            _ = try PostgresAddress(parsing: address)
            Issue.record("\(address) was taken")
        } catch {
            #expect(error.description.contains(expected), "\(address): \(error)")
        }
    }

    @Test func aHugeAddressIsRefusedWithoutEchoingIt() {
        let huge = "postgresql://u@h/" + String(repeating: "d", count: 100_000)
        do {
            _ = try PostgresAddress(parsing: huge)
            Issue.record("taken")
        } catch {
            #expect(error.description.count < 200)
        }
    }

    @Test func theDisplayedAddressHasNoPassword() {
        let settings = ReplicationSettings(
            host: "::1",
            username: "systole",
            password: "secret",
            database: "systole",
            tls: .disable,
            receiver: "room-1"
        )
        #expect(settings.displayAddress == "postgresql://systole@[::1]:5432/systole")
    }
}
