import Foundation
import GRDB
import Testing
import WorkoutKit

@testable import SQLiteStore

/// ECG and acceleration kept in rows of up to a minute: what goes in comes out, value for value, split where the
/// stream broke; queried by workout and by time; deleted with the workout.
@Suite struct WaveformStoreTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000.25)
    let strap = Device(name: "Polar H10 1A2B3C4D", address: "A0:9E:1A:00:00:01", manufacturer: "Polar")
    let rate = 130.04

    /// `frames` ECG frames of 73 values at `rate` from `start`, as an H10 sends them (a beat-like waveform).
    func frames(_ frames: Int, from start: Date, firstIndex: Int = 0, gapAtFirst: Bool = true) -> [WaveformSample] {
        (0..<frames).map { frame in
            let first = firstIndex + frame * 73
            let values = (first..<first + 73).map { index -> Int32 in
                let phase = Double(index % 130) / 130
                let qrs = phase > 0.3 && phase < 0.34 ? 1200 * sin((phase - 0.3) / 0.04 * .pi) : 0
                return Int32((qrs + 80 * sin(phase * 2 * .pi) + Double(index % 7) * 3).rounded())
            }
            return WaveformSample(
                kind: .electrocardiogram,
                start: start.addingTimeInterval(Double(frame * 73) / rate),
                samplingFrequency: rate,
                channels: [values],
                precededByGap: gapAtFirst && frame == 0,
                device: strap
            )
        }
    }

    @Test func framesPlacedAFewMillisecondsOffStillJoinWithoutAGap() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        // The timeline moves a frame's placement as it learns the radio's delay: +13 ms, then -9 ms.
        var jittered = frames(20, from: t0)
        for index in 8..<20 { jittered[index].startDate.addTimeInterval(0.013) }
        for index in 12..<20 { jittered[index].startDate.addTimeInterval(-0.022) }
        try await store.save(jittered.map(Sample.waveform), workoutID: workout)
        let stored = try await store.waveforms(.electrocardiogram, ofWorkout: workout)
        #expect(stored.count == 1, "\(stored.map(\.count))")
        #expect(stored.map(\.precededByGap) == [true])
    }

    @Test func framesJoinIntoMinuteRowsThatGiveBackEveryValueAndSplitAtAGap() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        // 150 s of frames, then 10 s lost, then 30 s more.
        let before = frames(267, from: t0)
        let resumed = t0.addingTimeInterval(160)
        let after = frames(53, from: resumed)
        for chunk in stride(from: 0, to: before.count, by: 40) {
            try await store.save(before[chunk..<min(chunk + 40, before.count)].map(Sample.waveform), workoutID: workout)
        }
        try await store.save(after.map(Sample.waveform), workoutID: workout)

        let stored = try await store.waveforms(.electrocardiogram, ofWorkout: workout)
        #expect(stored.allSatisfy { $0.endDate.timeIntervalSince($0.startDate) <= 60.000_1 })
        #expect(stored.count == 4, "150 s in rows of a minute, then the 30 s after the gap: \(stored.map(\.count))")
        #expect(stored.map(\.precededByGap) == [true, false, false, true])
        #expect(stored.flatMap { $0.channels[0] } == (before + after).flatMap { $0.channels[0] })
        #expect(stored.allSatisfy { $0.device == strap })
        // Each value at its time: the rows' rates are the frames' own.
        for row in stored { #expect(abs(row.samplingFrequency - rate) < 1e-6) }
        #expect(abs(stored[3].startDate.timeIntervalSince(resumed)) < 1e-6)
        #expect(abs(stored[2].endDate.timeIntervalSince(before.last!.endDate)) < 1e-6)
        // The first row keeps the first frame's identifier.
        #expect(stored[0].id == before[0].id)
    }

    @Test func aRowFromAnEarlierFoldGrowsUntilItsMinuteIsFull() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        let all = frames(100, from: t0)
        try await store.save(all[0..<10].map(Sample.waveform), workoutID: workout)
        // A read folds the inbox: the next frames find a stored row to extend.
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: workout).count == 1)
        try await store.save(all[10..<100].map(Sample.waveform), workoutID: workout)
        let stored = try await store.waveforms(.electrocardiogram, ofWorkout: workout)
        #expect(stored.map(\.count) == [7300])
        #expect(stored.flatMap { $0.channels[0] } == all.flatMap { $0.channels[0] })
    }

    @Test func theTimeRangeQueryReturnsTheRowsThatOverlapItAndNoOthers() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        try await store.save(frames(267, from: t0).map(Sample.waveform), workoutID: UUID())
        let rows = try await store.waveforms(.electrocardiogram, ofWorkout: UUID())
        #expect(rows.isEmpty)
        let middle = try await store.waveforms(
            .electrocardiogram,
            from: t0.addingTimeInterval(70),
            to: t0.addingTimeInterval(80)
        )
        #expect(middle.count == 1)
        #expect(
            middle.first.map { $0.startDate <= t0.addingTimeInterval(70) && $0.endDate > t0.addingTimeInterval(80) }
                == true
        )
        let all = try await store.waveforms(
            .electrocardiogram,
            from: t0.addingTimeInterval(59),
            to: t0.addingTimeInterval(121)
        )
        #expect(all.count == 3)
        #expect(try await store.waveforms(.acceleration, from: t0, to: t0.addingTimeInterval(200)).isEmpty)
        #expect(
            try await store.waveforms(
                .electrocardiogram,
                from: t0.addingTimeInterval(151),
                to: t0.addingTimeInterval(200)
            ).isEmpty
        )
    }

    @Test func threeAxesOfAccelerationComeBackAsTheyWent() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        func axis(_ piece: Int, _ axis: Int) -> [Int32] {
            (0..<36).map { index -> Int32 in Int32((piece * 36 + index) * (axis + 1) % 2000 - 1000) }
        }
        var pieces: [WaveformSample] = []
        for piece in 0..<20 {
            pieces.append(
                WaveformSample(
                    kind: .acceleration,
                    start: t0.addingTimeInterval(Double(piece * 36) / 50),
                    samplingFrequency: 50,
                    channels: [axis(piece, 0), axis(piece, 1), axis(piece, 2)],
                    device: strap
                )
            )
        }
        try await store.save(pieces.map(Sample.waveform), workoutID: workout)
        let stored = try await store.waveforms(.acceleration, ofWorkout: workout)
        #expect(stored.count == 1)
        for axis in 0..<3 {
            #expect(stored.flatMap { $0.channels[axis] } == pieces.flatMap { $0.channels[axis] })
        }
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: workout).isEmpty)
    }

    @Test func deletingTheWorkoutDeletesItsWaveformsAndAnchoredQueriesSeeBoth() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let start = t0
        let workout = try await recordWorkout(
            in: store,
            activity: .running,
            start: start,
            seconds: 100,
            samples: frames(150, from: start.addingTimeInterval(1)).map(Sample.waveform)
        )
        let other = UUID()
        try await store.save(frames(10, from: t0.addingTimeInterval(500)).map(Sample.waveform), workoutID: other)
        let added = try await store.changes(of: .electrocardiogram)
        #expect(added.added.count == 3)
        #expect(added.added.allSatisfy { $0.sampleType == .electrocardiogram })
        #expect(try await store.deleteWorkout(workout.id))
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: workout.id).isEmpty)
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: other).count == 1, "another's stay")
        let deleted = try await store.changes(of: .electrocardiogram, after: added.anchor)
        #expect(Set(deleted.deleted) == Set(added.added.filter { $0.startDate < t0.addingTimeInterval(400) }.map(\.id)))
    }

    @Test func aMalformedWaveformIsRefusedWithTheReasonAndNothingElseOfTheBatchIsStored() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        let good = frames(2, from: t0)
        var unequal = good[1]
        unequal.kind = .acceleration
        unequal.channels = [[1, 2, 3], [1, 2], [1, 2, 3]]
        var tooFast = good[1]
        tooFast.samplingFrequency = 5000
        var tooLarge = good[1]
        tooLarge.channels[0][5] = 100_001
        var none = good[1]
        none.channels = [[]]
        var nan = good[1]
        nan.samplingFrequency = .nan
        for bad in [unequal, tooFast, tooLarge, none, nan] {
            let error = await #expect(throws: HealthStoreError.self) {
                try await store.save([.waveform(good[0]), .waveform(bad)], workoutID: workout)
            }
            #expect(error?.message.contains("was refused") == true, "\(String(describing: error))")
        }
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: workout).isEmpty)
        // The store goes on.
        try await store.save(good.map(Sample.waveform), workoutID: workout)
        #expect(try await store.waveforms(.electrocardiogram, ofWorkout: workout).map(\.count) == [146])
    }

    @Test func anHourOfECGCostsLessThanTwoBytesAValueInItsRows() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        let minute = frames(107, from: t0)
        try await store.save(minute.map(Sample.waveform), workoutID: workout)
        try await store.flush()
        _ = try await store.waveforms(.electrocardiogram, ofWorkout: workout)
        let queue = try DatabaseQueue(path: folder.path)
        let (bytes, values) = try await queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT SUM(length(channels)) FROM waveform") ?? 0,
                try Int.fetchOne(db, sql: "SELECT SUM(count) FROM waveform") ?? 0
            )
        }
        #expect(values == 107 * 73)
        #expect(Double(bytes) / Double(values) < 2, "\(bytes) bytes for \(values) values")
    }
}
