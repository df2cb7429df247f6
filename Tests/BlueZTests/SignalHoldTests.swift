import Testing

@testable import BlueZ

/// The client's hold on bluetoothd's signals around reloads of its cache.
@Suite struct SignalHoldTests {
    /// Takes each signal in turn: whether it may be applied now.
    func take(_ signals: [Int], _ hold: inout SignalHold<Int>) -> [Bool] {
        signals.map { hold.take($0) }
    }

    func next(_ hold: inout SignalHold<Int>, _ replayer: inout Bool) -> [Int]? {
        hold.nextBatch(isReplayer: &replayer)
    }

    @Test func withoutAReloadEverySignalIsAppliedAtOnce() {
        var hold = SignalHold<Int>()
        var replayer = false
        let applied = take([1, 2, 3], &hold)
        let batch = next(&hold, &replayer)
        #expect(applied == [true, true, true])
        #expect(batch == nil)
    }

    @Test func signalsDuringAReloadWaitForItAndComeBackInOrder() {
        var hold = SignalHold<Int>()
        var replayer = false
        var other = false
        hold.beginReload()
        let duringReload = take([1, 2, 3], &hold)
        let whileReloading = next(&hold, &replayer)
        hold.endReload()
        let first = next(&hold, &replayer)
        // Arriving while the replayer applies them: held too, and handed to the same replayer next.
        let duringReplay = take([4], &hold)
        let toOther = next(&hold, &other)
        let second = next(&hold, &replayer)
        let third = next(&hold, &replayer)
        let afterwards = take([5], &hold)

        #expect(duringReload == [false, false, false])
        #expect(whileReloading == nil)
        #expect(first == [1, 2, 3])
        #expect(duringReplay == [false])
        #expect(toOther == nil)
        #expect(second == [4])
        #expect(third == nil)
        #expect(afterwards == [true])
    }

    @Test func overlappingReloadsReleaseOnlyWhenTheLastEnds() {
        var hold = SignalHold<Int>()
        var replayer = false
        hold.beginReload()
        hold.beginReload()
        let one = take([1], &hold)
        hold.endReload()
        let afterFirstEnd = next(&hold, &replayer)
        let two = take([2], &hold)
        hold.endReload()
        let batch = next(&hold, &replayer)
        let done = next(&hold, &replayer)
        let three = take([3], &hold)

        #expect(one == [false])
        #expect(afterFirstEnd == nil)
        #expect(two == [false])
        #expect(batch == [1, 2])
        #expect(done == nil)
        #expect(three == [true])
    }

    @Test func aReloadStartingDuringAReplayHoldsWhatIsLeftForItsOwnEnd() {
        var hold = SignalHold<Int>()
        var first = false
        var second = false
        hold.beginReload()
        _ = take([1], &hold)
        hold.endReload()
        let firstBatch = next(&hold, &first)
        hold.beginReload()
        let two = take([2], &hold)
        // The first replayer stops: a new reload is under way, and its end replays the rest.
        let firstStops = next(&hold, &first)
        hold.endReload()
        let secondBatch = next(&hold, &second)
        let secondDone = next(&hold, &second)

        #expect(firstBatch == [1])
        #expect(two == [false])
        #expect(firstStops == nil)
        #expect(secondBatch == [2])
        #expect(secondDone == nil)
    }
}
