import BlueZ
import Testing

@testable import HeartRateSensors

/// Silence checks' deadlines rounded onto a quarter-second grid.
@Suite struct InstantGridTests {
    @Test func deadlinesAreRoundedUpOntoTheGrid() {
        let origin = ContinuousClock.now
        let grid = InstantGrid(step: .milliseconds(250), origin: origin)
        #expect(grid.next(atOrAfter: origin) == origin)
        #expect(grid.next(atOrAfter: origin + .milliseconds(1)) == origin + .milliseconds(250))
        #expect(grid.next(atOrAfter: origin + .milliseconds(250)) == origin + .milliseconds(250))
        #expect(grid.next(atOrAfter: origin + .milliseconds(740)) == origin + .milliseconds(750))
        // Two sensors' deadlines within one step fall due together.
        #expect(
            grid.next(atOrAfter: origin + .milliseconds(1_010)) == grid.next(atOrAfter: origin + .milliseconds(1_240))
        )
    }
}
