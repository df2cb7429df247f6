import Foundation
import SystoleTestSupport
import Testing

extension WebPageTests {
    /// Strangers without the token try to hold the server (slowloris): idle connections, a POST whose large body
    /// comes a byte every 2 s, a request head a byte every 2 s, each kind from an address of its own and more than
    /// one address may open. Every one is closed (the idle and slow heads by the head deadline, the slow bodies
    /// right after their 401, those over the per-address limit at once), and the token holder is answered meanwhile.
    @Test func strangersCannotHoldTheServer() async throws {
        let s = try await Self.start(configuration: Self.http)
        defer { s.stop() }
        let output = try await PythonTools.run(
            Self.webFolder.appendingPathComponent("slow_clients.py").path,
            [
                "127.0.0.1", "\(s.port)", "--bearer", Self.token, "--idle", "30", "--slow-body", "12",
                "--slow-head", "12", "--deadline", "45",
            ]
        )
        let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(result["holder"] as? Int == 200, "\(result)")
        for kind in ["idle", "slowBody", "slowHead"] {
            let counts = result[kind] as? [String: Int] ?? [:]
            #expect(counts["open"] == 0, "\(kind): \(counts)")
        }
        #expect((result["slowBody"] as? [String: Int])?["unauthorized"] == 12, "\(result)")
    }

    /// Health data over HTTP is kept out of caches and never sniffed into another type: the files, /metrics, the
    /// JSON.
    @Test func filesAndMetricsAreNeitherCachedNorSniffed() async throws {
        let s = try await Self.start(configuration: Self.http)
        defer { s.stop() }
        try await s.startWorkout()
        let ended = try await s.systole("end")
        #expect(ended.status == 0, "\(ended.standardError)")
        let workouts = try await s.authorized("/api/workouts")
        let list = try JSONSerialization.jsonObject(with: Data((workouts["body"] as? String ?? "").utf8))
        let id = try #require((list as? [[String: Any]])?.first?["id"] as? String, "\(workouts)")
        for path in ["/metrics", "/api/workouts", "/api/workouts/\(id)/export/csv", "/api/workouts/\(id)/export/fit"] {
            let response = try await s.authorized(path)
            let headers = response["headers"] as? [String: String] ?? [:]
            #expect(response["status"] as? Int == 200, "\(path): \(response)")
            #expect(headers["cache-control"] == "no-store", "\(path): \(headers)")
            #expect(headers["x-content-type-options"] == "nosniff", "\(path): \(headers)")
        }
    }
}
