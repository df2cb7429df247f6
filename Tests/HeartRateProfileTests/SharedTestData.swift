import Foundation

/// Locates `../shared/testdata/` beside the checkout (where CI puts it), or `$SYSTOLE_SHARED/testdata`.
///
/// The shared vectors are not copied into the project; a missing folder is a test failure with a message,
/// never a silent skip.
enum SharedTestData {
    struct Missing: Error, CustomStringConvertible {
        var looked: [String]
        var description: String {
            "shared test data not found (looked in \(looked.joined(separator: ", "))): check out ../shared beside the project or set SYSTOLE_SHARED"
        }
    }

    static func url(_ name: String) throws -> URL {
        var candidates: [URL] = []
        if let shared = ProcessInfo.processInfo.environment["SYSTOLE_SHARED"] {
            candidates.append(URL(fileURLWithPath: shared))
        }
        // Tests/HeartRateProfileTests/SharedTestData.swift → package root → its parent.
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.deletingLastPathComponent().appendingPathComponent("shared"))
        let files = candidates.map { $0.appendingPathComponent("testdata").appendingPathComponent(name) }
        guard let found = files.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw Missing(looked: files.map(\.path))
        }
        return found
    }
}
