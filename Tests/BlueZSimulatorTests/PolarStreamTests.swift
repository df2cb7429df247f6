import Foundation
import PolarMeasurementData
import Testing

@testable import BlueZSimulator

/// The simulated strap's PMD streams without a bus: frames, timestamps, the ECG's beats and the faults.
@Suite struct PolarStreamTests {
    func stream(
        _ spec: PMDSpec = PMDSpec(),
        type: PMDMeasurementType = .ecg,
        mtu: Int = 232,
        recorded: [Int32]? = nil
    )
        -> PolarStream
    {
        PolarStream(
            type: type,
            startedAt: 2,
            rate: type == .ecg ? spec.rate : 100,
            mtu: mtu,
            spec: spec,
            clock: PolarClock(onAt: 0, ppm: spec.clockPPM),
            recorded: recorded,
            seed: 7
        )
    }

    @Test func framesHoldWhatTheMTUAllowsStampedByTheStrapsClock() throws {
        var spec = PMDSpec()
        spec.rate = 129.5
        spec.clockPPM = 50
        var ecg = stream(spec)
        let payloads = ecg.frames(until: 62, rPeaks: [])
        let frames = try payloads.map { try PMDFrame(decoding: $0) }
        #expect(frames.count == Int(60 * 129.5) / 73)
        for frame in frames { #expect(try frame.samples().count == 73) }
        // The last sample of frame k is sample 73k + 72, taken at 2 + that / 129.5 host seconds, on a clock that
        // started at 2019-01-01 and runs 50 ppm fast.
        for (k, frame) in frames.enumerated() {
            let host = 2 + Double(73 * k + 72) / 129.5
            let expected = PolarClock.switchedOn + UInt64((host * 1.00005 * 1e9).rounded())
            #expect(frame.sensorTimestamp == expected)
        }
        var small = stream(mtu: 23)
        let first = try PMDFrame(decoding: try #require(small.frames(until: 3, rPeaks: []).first))
        #expect(try first.samples().count == 3)
        var acc = stream(type: .acceleration, mtu: 232)
        let accFrame = try PMDFrame(decoding: try #require(acc.frames(until: 3, rPeaks: []).first))
        guard case .acceleration(let samples) = try accFrame.samples() else { throw Unexpected() }
        #expect(samples.count == 36)
        #expect(samples.allSatisfy { (850...1150).contains($0.z) })
    }

    struct Unexpected: Error {}

    @Test func theECGsRPeaksFallOnTheHeartsBeats() throws {
        let beats: [Double] = stride(from: 2.3, to: 30, by: 0.83).map { (time: Double) in time + 0.05 * sin(time) }
        var ecg = stream()
        var values: [Int32] = []
        for payload in ecg.frames(until: 30, rPeaks: beats) {
            guard case .ecg(let samples) = try PMDFrame(decoding: payload).samples() else { throw Unexpected() }
            values += samples
        }
        // The samples above half the R wave that are the highest around them.
        var peaks: [Double] = []
        for index in 1..<(values.count - 1) where values[index] > 600 {
            if values[index] >= values[index - 1], values[index] > values[index + 1] {
                peaks.append(2 + Double(index) / 130)
            }
        }
        let end: Double = 2 + Double(values.count - 1) / 130
        let expected = beats.filter { (beat: Double) in beat > 2.1 && beat < end }
        #expect(peaks.count == expected.count)
        for (peak, beat) in zip(peaks, expected) {
            #expect(abs(peak - beat) <= 1.0 / 130, "R at \(peak), beat at \(beat)")
        }
    }

    @Test func aRecordedECGIsPlayedExactlyAndOnce() throws {
        let file = (0..<200).map { Int32($0 * 37 % 2001) - 1000 }
        var ecg = stream(recorded: file)
        var played: [Int32] = []
        for payload in ecg.frames(until: 100, rPeaks: []) {
            guard case .ecg(let samples) = try PMDFrame(decoding: payload).samples() else { throw Unexpected() }
            played += samples
        }
        #expect(played == file)
        #expect(ecg.nextFrameDue == nil)
    }

    @Test func faultsRepeatStepBackAndLie() throws {
        var spec = PMDSpec()
        spec.duplicateEvery = 3
        spec.backwardEvery = 5
        var ecg = stream(spec)
        let frames = try ecg.frames(until: 2 + 15 * 73 / 130.0, rPeaks: []).map { try PMDFrame(decoding: $0) }
        // Frames 3, 6, 9, 12 and 15 twice; frames 5, 10 and 15 a second back.
        #expect(frames.count == 15 + 5)
        let timestamps = frames.map(\.sensorTimestamp)
        #expect(timestamps[2] == timestamps[3])
        let backward = zip(timestamps, timestamps.dropFirst()).filter { $0.1 < $0.0 }
        #expect(backward.count == 3)

        var hostileSpec = PMDSpec()
        hostileSpec.hostileEvery = 2
        var hostile = stream(hostileSpec)
        let payloads = hostile.frames(until: 2 + 9 * 73 / 130.0, rPeaks: [])
        var reasons: [PMDFrameError.Reason] = []
        var crowded = 0
        for payload in payloads {
            do {
                let frame = try PMDFrame(decoding: payload)
                _ = try frame.samples()
                if frame.sensorTimestamp < PolarClock.switchedOn + 2_600_000_000 { crowded += 1 }
            } catch {
                reasons.append(error.reason)
            }
        }
        #expect(reasons.contains(.partialSample(sampleBytes: 3)))
        #expect(reasons.contains(.tooLong))
        #expect(reasons.contains(.unsupported(.ecg, layout: 0x55, compressed: false)))
        #expect(crowded == 1, "a frame 1 ms after the one before it, with 73 samples")
    }
}
