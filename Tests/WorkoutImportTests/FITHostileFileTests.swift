import FITFormat
import Foundation
import SystoleTestSupport
import Testing

@testable import WorkoutImport

/// Files as an attacker (or a broken device) would hand them over: each refused with what is wrong and where, none
/// crashing or hanging the reader.
@Suite struct FITHostileFileTests {
    static func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try FITActivityReader.read(bytes)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func theHandMadeActivityIsRead() throws {
        let activity = try FITActivityReader.read(FITBytes.activity().file())
        #expect(activity.heartRates.map(\.beatsPerMinute) == [90, 91])
        #expect(activity.end.timeIntervalSince(activity.start) == 60)
    }

    @Test func bigEndianMessagesAndCompressedTimestampsAreRead() throws {
        var fit = FITBytes()
        fit.define(0, global: 0, [(0, 1, 0x00)])
        fit.data(0, [4])
        // A record with a full timestamp, big-endian, then two with five-bit offsets in their headers.
        fit.define(1, global: 20, [(253, 4, 0x86), (3, 1, 0x02)], bigEndian: true)
        let start = UInt32(1_790_000_000 - 631_065_600)
        fit.data(1, FITBytes.le32(start).reversed() + [80])
        fit.define(2, global: 20, [(3, 1, 0x02)])
        for offset in [UInt32(30), 35] {
            fit.records += [0x80 | 2 << 5 | UInt8((start + offset) & 0x1F), 81]
        }
        let activity = try FITActivityReader.read(fit.file())
        #expect(activity.heartRates.map(\.beatsPerMinute) == [80, 81, 81])
        let seconds = activity.heartRates.map { $0.date.timeIntervalSince1970 - 1_790_000_000 }
        // The start's five low bits are 0: 35 s is 3 in them, less than 30's, so the counter rolled over.
        #expect(start & 0x1F == 0)
        #expect(seconds == [0, 30, 35], "\(seconds)")
    }

    @Test func everyTruncationIsRefusedAsSuch() {
        let file = FITBytes.activity().file()
        for length in 0..<file.count {
            let refusal = Self.refusal(Array(file.prefix(length)))
            #expect(refusal != nil, "\(length) bytes")
            #expect(refusal?.contains("byte") == true, "\(length) bytes: \(refusal ?? "")")
        }
    }

    @Test func everyChangedByteIsCaughtByTheCRCs() {
        let file = FITBytes.activity().file()
        for index in file.indices {
            var changed = file
            changed[index] ^= 0x5A
            let refusal = Self.refusal(changed)
            #expect(refusal != nil, "byte \(index) changed")
        }
        var wrongCRC = file
        wrongCRC[wrongCRC.count - 1] ^= 1
        #expect(Self.refusal(wrongCRC)?.contains("CRC") == true)
    }

    @Test func structuresNoEncoderWritesAreRefusedWithTheirPlace() {
        // A definition of 255 fields of 255 bytes in a file of a few dozen.
        var huge = FITBytes.activity()
        huge.define(3, global: 20, Array(repeating: (3, 255, 0x0D), count: 255))
        huge.data(3, [1, 2, 3])
        #expect(Self.refusal(huge.file())?.contains("runs past the end") == true)
        // A data message whose local type was never defined.
        var undefined = FITBytes.activity()
        undefined.data(9, [1, 2, 3])
        #expect(Self.refusal(undefined.file())?.contains("local type 9 before its definition") == true)
        // A header claiming four gigabytes of messages.
        #expect(Self.refusal(FITBytes.activity().file(dataSize: .max))?.contains("truncated") == true)
        // A compressed timestamp with no timestamp before it.
        var compressed = FITBytes()
        compressed.define(0, global: 20, [(3, 1, 0x02)])
        compressed.records += [0x85, 90]
        #expect(Self.refusal(compressed.file())?.contains("compressed timestamp") == true)
        // Not FIT at all.
        #expect(Self.refusal(Array("<TrainingCenterDatabase/>".utf8))?.contains("byte") == true)
        #expect(Self.refusal([])?.contains("too few") == true)
    }

    @Test func absurdValuesAreRefusedWithWhatAndWhere() {
        let tooFast = Self.refusal(FITBytes.activity(bpm: [90, 251]).file())
        #expect(tooFast?.contains("heart rate of 251 bpm") == true, "\(tooFast ?? "")")
        #expect(tooFast?.contains("at byte") == true)
        let future = Self.refusal(FITBytes.activity(start: 4_102_444_800).file())
        #expect(future?.contains("in the future") == true, "\(future ?? "")")
        let month = Self.refusal(FITBytes.activity(seconds: 30 * 86_400).file())
        #expect(month?.contains("at most a week") == true, "\(month ?? "")")
        var course = FITBytes()
        course.define(0, global: 0, [(0, 1, 0x00)])
        course.data(0, [6])
        #expect(Self.refusal(course.file())?.contains("not an activity") == true)
        var slowBeat = FITBytes.activity()
        slowBeat.define(4, global: 78, [(0, 4, 0x84)])
        slowBeat.data(4, [0x20, 0x03, 0x10, 0x27])  // 0.8 s, then 10 s
        #expect(Self.refusal(slowBeat.file())?.contains("RR interval of 10.0 s") == true)
    }

    @Test func fieldsOfAnyTypeAndValueNeitherTrapNorPass() {
        // The definition chooses each field's type: a float64 sport of -1e300 (the fuzzer's first find) and a
        // float64 timestamp of 1e300 are refused or read as "other", never a trap.
        var sport = FITBytes.activity()
        sport.define(5, global: 18, [(253, 4, 0x86), (2, 4, 0x86), (5, 8, 0x89)])
        let end = FITBytes.time(1_790_000_060)
        sport.data(5, end + FITBytes.time(1_790_000_000) + FITBytes.le64((-1e300).bitPattern))
        #expect((try? FITActivityReader.read(sport.file()))?.activity == .other)
        var time = FITBytes()
        time.define(0, global: 20, [(253, 8, 0x89), (3, 1, 0x02)])
        time.data(0, FITBytes.le64((1e300).bitPattern) + [90])
        let refusal = Self.refusal(time.file())
        #expect(refusal?.contains("before 2000 or in the future") == true, "\(refusal ?? "")")
    }

    @Test func countsBeyondWhatAWorkoutHoldsAreRefusedWithoutHoldingThem() {
        // One record more than the limit, at one second: 6 MB of file, refused at the limit.
        var flood = FITBytes()
        flood.define(0, global: 0, [(0, 1, 0x00)])
        flood.data(0, [4])
        flood.define(1, global: 20, [(253, 4, 0x86), (3, 1, 0x02)])
        let second = FITBytes.time(1_790_000_001)
        for _ in 0...ImportLimits.heartRates { flood.data(1, second + [90]) }
        let refusal = Self.refusal(flood.file())
        #expect(
            refusal?.contains("more than \(ImportLimits.heartRates) heart-rate readings") == true,
            "\(refusal ?? "")"
        )
    }

    @Test func namesAreCleanedOfEscapes() throws {
        var named = FITBytes.activity()
        let name = Array("Edge\u{1B}[2J\u{7}530".utf8)
        named.define(6, global: 0, [(0, 1, 0x00), (8, UInt8(name.count + 1), 0x07)])
        named.data(6, [4] + name + [0])
        let product = try FITActivityReader.read(named.file()).recorder.product ?? ""
        #expect(!product.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(product.debugDescription)")
        #expect(product.hasPrefix("Edge") && product.hasSuffix("530"))
    }

    @Test func randomDamageWithTheCRCsMadeRightNeverCrashesTheReader() {
        // The CRCs stop random damage at the door; made right again, the damage reaches the structure itself.
        var generator = SplitMix64(seed: 2026)
        let records = FITBytes.activity().records
        var refused = 0
        for _ in 0..<3000 {
            var damaged = FITBytes(records: records)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<damaged.records.count, using: &generator)
                damaged.records[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if Self.refusal(damaged.file()) != nil { refused += 1 }
        }
        // Most damage is refused; some lands on values that stay plausible (a heart rate of 91 for 90).
        #expect(refused > 1000)
    }
}
