import SystoleTestSupport
import Testing

/// `--database` and its companions, refused before anything is connected when they are wrong.
@Suite struct CentralOptionsTests {
    @Test(arguments: [
        (["stats", "--interval", "99999999999w"], "--interval is at most a year"),
        (["stats", "--interval", "367d"], "--interval is at most a year"),
        (["stats", "--interval=-1h"], "--interval takes a number"),
        (["workouts", "--database", "mysql://u@h/d"], "starts with postgresql://"),
        (["workouts", "--database", "postgresql://u@h/d?sslmode=off"], "sslmode is disable, require or verify-full"),
        (["stats", "--athlete", "Ana"], "--athlete goes with --database"),
    ])
    func wrongOptionsAreUsageErrors(arguments: [String], expected: String) async throws {
        let database = arguments.contains("--database") || arguments.contains("--athlete")
        let result = try await CommandRunner.run(
            "systole",
            arguments + (database ? [] : ["--database", "postgresql://u@127.0.0.1:1/d"])
        )
        // 2: a usage error, found before anything is connected (1 would be the unreachable database's).
        #expect(result.status == 2, "\(arguments): \(result.status)")
        #expect(result.standardError.contains(expected), "\(arguments): \(result.standardError)")
    }

    @Test func anUnreachableDatabaseSaysWhatToCheck() async throws {
        let result = try await CommandRunner.run("systole", ["workouts", "--database", "postgresql://u@127.0.0.1:1/d"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot read the central database at 127.0.0.1:1"))
        #expect(result.standardError.contains("Check the address, the password"))
    }
}
