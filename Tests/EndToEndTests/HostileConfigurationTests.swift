import Foundation
import SystoleTestSupport
import Testing

/// The real `systoled` given configurations a careless or hostile hand wrote: each one stops it at start with the
/// reason and exit status 78, which systemd's unit does not restart, instead of a crash or a restart loop.
@Suite struct HostileConfigurationTests {
    func start(with text: String?) async throws -> CommandRunner.Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systoled-config-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("systoled.toml").path
        if let text {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
        } else {
            try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        }
        return try await CommandRunner.run("systoled", ["--config", config])
    }

    @Test func aBusAddressThatCannotWorkExits78AtStart() async throws {
        let result = try await start(with: "bus = \"garbage:nothing\"\n")
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.standardError.contains(":1: bus: 'garbage:nothing' is not a D-Bus address"))
    }

    @Test func nestedArraysSixtyThousandDeepExit78() async throws {
        let result = try await start(with: "sensors = " + String(repeating: "[", count: 60_000) + "\n")
        #expect(result.status == 78, "\(result.standardError.prefix(500))")
        #expect(result.standardError.contains("arrays nest more than 8 deep"))
    }

    @Test func aFolderInPlaceOfTheFileIsCalledAFolder() async throws {
        let result = try await start(with: nil)
        #expect(result.status == 78)
        #expect(result.standardError.contains("is a folder, not a file"), "\(result.standardError)")
    }
}
