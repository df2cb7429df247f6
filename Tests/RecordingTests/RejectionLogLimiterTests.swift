import Testing

@testable import Recording

@Suite struct RejectionLogLimiterTests {
    @Test func theFirstIsReportedAtOnceThenAtMostOneSummaryPerInterval() {
        var limiter = RejectionLogLimiter(interval: .seconds(60))
        let start = ContinuousClock.now
        func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }
        #expect(limiter.record(at: at(0)) == 1)
        for second in 1..<60 { #expect(limiter.record(at: at(Double(second))) == nil) }
        // The first is reported at once; the 59 after it are summed up with the first one a minute later.
        #expect(limiter.record(at: at(60)) == 60)
        #expect(limiter.record(at: at(61)) == nil)
        #expect(limiter.record(at: at(200)) == 2)
        #expect(limiter.record(at: at(200.5)) == nil)
    }
}
