import Foundation
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import SQLiteStore

/// Rows of the inbox read back with one table of devices and types for the whole fold (`PackedNames`).
@Suite struct InboxTests {
    let t0 = Date(timeIntervalSinceReferenceDate: 812_000_000)

    func device(of sample: Sample) -> Device? {
        switch sample {
        case .quantity(let q): q.device
        case .heartbeatSeries(let s): s.device
        case .waveform(let w): w.device
        }
    }

    @Test func devicesAndTypesSharedAcrossRowsComeBackAsEachSampleNamedThem() throws {
        let strap = Device(name: "H10", address: "A0:9E:1A:00:00:01", manufacturer: "Polar", firmwareVersion: "5.0")
        // The same bytes but the last field: must not be taken for the strap read before.
        let updated = Device(name: "H10", address: "A0:9E:1A:00:00:01", manufacturer: "Polar", firmwareVersion: "5.1")
        // Same length, one byte apart, and no device at all.
        let other = Device(name: "H10", address: "A0:9E:1A:00:00:02", manufacturer: "Polar", firmwareVersion: "5.0")
        let energy = Sample.quantity(
            QuantitySample(
                type: .activeEnergyBurned,
                quantity: Quantity(2, .kilojoule),
                start: t0,
                end: t0,
                device: strap
            )
        )
        let rows = [
            [
                heartRate(120, at: 0, since: t0, device: strap), energy,
                heartRate(121, at: 0.5, since: t0, device: other),
            ],
            [
                heartRate(122, at: 1, since: t0, device: updated), heartRate(123, at: 1, since: t0, device: nil),
                heartRate(124, at: 1.5, since: t0, device: strap),
            ],
        ]
        var names = PackedNames()
        var read: [Sample] = []
        for row in rows { read += try Inbox.unpack(try Inbox.pack(row), names: &names) }

        let expected = rows.flatMap { $0 }
        #expect(read.count == expected.count)
        for (got, wanted) in zip(read, expected) {
            #expect(device(of: got) == device(of: wanted))
            #expect(got.id == wanted.id)
        }
        let types = read.compactMap { sample -> QuantityType? in
            if case .quantity(let q) = sample { return q.type }
            return nil
        }
        #expect(types == [.heartRate, .activeEnergyBurned, .heartRate, .heartRate, .heartRate, .heartRate])
    }

    @Test func aRowCutShortIsUnreadableEvenWithItsNamesKnown() throws {
        let strap = Device(name: "H10", address: "A0:9E:1A:00:00:01")
        var names = PackedNames()
        let packed = try Inbox.pack([
            heartRate(120, at: 0, since: t0, device: strap), heartRate(121, at: 1, since: t0, device: strap),
        ])
        _ = try Inbox.unpack(packed, names: &names)
        #expect(throws: (any Error).self) { try Inbox.unpack(packed.dropLast(3), names: &names) }
    }
}
