import Foundation

extension EDFRecording {
    /// The file's bytes.
    public func encoded() throws(Failure) -> [UInt8] {
        let layout = try EDFLayout(self)
        var bytes = header(layout)
        for record in layout.records {
            for value in record.samples {
                let digital = Int16(clamping: Int((Double(value) / Double(layout.gain)).rounded()))
                bytes.append(UInt8(truncatingIfNeeded: digital))
                bytes.append(UInt8(truncatingIfNeeded: digital >> 8))
            }
            // Milli-g within ±16 g fit 16 bits: one digital unit per mg.
            for axis in record.acceleration {
                for value in axis {
                    let digital = Int16(clamping: value)
                    bytes.append(UInt8(truncatingIfNeeded: digital))
                    bytes.append(UInt8(truncatingIfNeeded: digital >> 8))
                }
            }
            var annotations = Array(record.annotations.utf8)
            annotations += [UInt8](repeating: 0, count: layout.annotationBytes - annotations.count)
            bytes += annotations
        }
        return bytes
    }

    private func header(_ layout: EDFLayout) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: layout.start)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        let month = months[max(0, min(11, (parts.month ?? 1) - 1))]
        let patient = "X X X " + Self.subfield(athlete ?? "X")
        let recording = "Startdate \(two(parts.day))-\(month)-\(parts.year ?? 1985) X X " + Self.subfield(sensor)
        var text = Self.field("0", 8) + Self.field(patient, 80) + Self.field(recording, 80)
        text += Self.field("\(two(parts.day)).\(two(parts.month)).\(two((parts.year ?? 1985) % 100))", 8)
        text += Self.field("\(two(parts.hour)).\(two(parts.minute)).\(two(parts.second))", 8)
        let signals = layout.signals
        text += Self.field("\(256 * (signals.count + 1))", 8) + Self.field(layout.isContinuous ? "EDF+C" : "EDF+D", 44)
        text += Self.field("\(layout.records.count)", 8) + Self.field(layout.durationText, 8)
        text += Self.field("\(signals.count)", 4)
        // Per signal, field by field: the ECG, the accelerometer's axes when recorded, then the annotations.
        let fields = signals.map(\.fields)
        for position in fields[0].indices {
            text += fields.map { Self.field($0[position].text, $0[position].width) }.joined()
        }
        return Array(text.utf8)
    }

    /// `text` as an EDF header field: printable ASCII only, cut or padded with spaces to `width`.
    static func field(_ text: String, _ width: Int) -> String {
        let ascii = String(text.unicodeScalars.map { (32...126).contains($0.value) ? Character($0) : "_" })
        let cut = String(ascii.prefix(width))
        return cut + String(repeating: " ", count: width - cut.count)
    }

    /// One EDF+ subfield: no spaces (they separate subfields).
    static func subfield(_ text: String) -> String {
        let joined = text.split(whereSeparator: \.isWhitespace).joined(separator: "_")
        return joined.isEmpty ? "X" : joined
    }
}

/// Where every sample and annotation of an ``EDFRecording`` goes.
///
/// One continuous signal (EDF+C: EDFlib, and so pyedflib, and MNE read no EDF+D): each run starts at the sample
/// nearest its own time, a gap between runs and the end of the last record hold 0 µV under a `no ECG` annotation
/// that spans them.
struct EDFLayout {
    struct Record {
        var onset: Double
        var samples: ArraySlice<Int32>
        /// x, y and z, when the accelerometer was recorded.
        var acceleration: [ArraySlice<Int32>] = []
        var annotations: String
    }

    /// One signal's header fields.
    struct Signal {
        var label: String
        var transducer: String
        var unit: String
        var physicalMinimum: String
        var physicalMaximum: String
        var digitalMinimum = "-32768"
        var digitalMaximum = "32767"
        var prefiltering: String
        var samplesPerRecord: String
        var reserved = ""

        /// The header's fields in their order, with their widths.
        var fields: [(text: String, width: Int)] {
            [
                (label, 16), (transducer, 80), (unit, 8), (physicalMinimum, 8), (physicalMaximum, 8),
                (digitalMinimum, 8), (digitalMaximum, 8), (prefiltering, 80), (samplesPerRecord, 8), (reserved, 32),
            ]
        }
    }

    /// The signals the header describes: the ECG, the accelerometer's axes, the annotations.
    var signals: [Signal] {
        var signals = [
            Signal(
                label: "ECG",
                transducer: "chest strap electrodes",
                unit: "uV",
                physicalMinimum: "\(-32768 * gain)",
                physicalMaximum: "\(32767 * gain)",
                prefiltering: "as recorded by the sensor",
                samplesPerRecord: "\(EDFRecording.samplesPerRecord)"
            )
        ]
        if let accelerationPerRecord {
            for axis in ["X", "Y", "Z"] {
                signals.append(
                    Signal(
                        label: "Accel \(axis)",
                        transducer: "chest strap accelerometer",
                        unit: "mg",
                        physicalMinimum: "-32768",
                        physicalMaximum: "32767",
                        prefiltering: "resampled linearly to the records",
                        samplesPerRecord: "\(accelerationPerRecord)"
                    )
                )
            }
        }
        signals.append(
            Signal(
                label: "EDF Annotations",
                transducer: "",
                unit: "",
                physicalMinimum: "-1",
                physicalMaximum: "1",
                digitalMinimum: "-32768",
                digitalMaximum: "32767",
                prefiltering: "",
                samplesPerRecord: "\(annotationBytes / 2)"
            )
        )
        return signals
    }

    /// The header's start: the first sample's time, to the second below.
    let start: Date
    let durationText: String
    let gain: Int
    var records: [Record] = []
    let isContinuous = true
    /// Bytes of annotations per record (even).
    var annotationBytes = 0
    /// Samples of each accelerometer axis per record; nil without the accelerometer.
    var accelerationPerRecord: Int?

    init(_ recording: EDFRecording) throws(EDFRecording.Failure) {
        let runs = recording.runs.filter { !$0.microvolts.isEmpty }
        guard let first = runs.first else { throw .noECG }
        for run in runs where !(EDFRecordingRates.plausible.contains(run.rate)) {
            throw .implausibleRate(run.rate)
        }
        start = Date(timeIntervalSince1970: first.start.timeIntervalSince1970.rounded(.down))
        let firstOnset = first.start.timeIntervalSince(start)
        let count = runs.reduce(0) { $0 + $1.microvolts.count }
        let measured = runs.reduce(0.0) { $0 + $1.rate * Double($1.microvolts.count) } / Double(count)
        let perRecord = EDFRecording.samplesPerRecord
        durationText = String(String(format: "%.6f", Double(perRecord) / measured).prefix(8))
        let duration = Double(durationText) ?? Double(perRecord) / measured
        let rate = Double(perRecord) / duration
        let largest = runs.flatMap(\.microvolts).map { Int($0.magnitude) }.max() ?? 0
        gain = max(1, (largest + 32766) / 32767)
        var marks: [(time: Double, text: String)] = recording.rPeaks.map {
            (firstOnset + $0.timeIntervalSince(first.start), "R")
        }
        var signal: [Int32] = []
        signal.reserveCapacity(count + perRecord)
        func markMissing(upTo index: Int) {
            guard index > signal.count else { return }
            let seconds = Double(index - signal.count) / rate
            marks.append(
                (firstOnset + Double(signal.count) / rate, "no ECG\(Self.durationMark)\(Self.number(seconds))")
            )
            signal += [Int32](repeating: 0, count: index - signal.count)
        }
        for run in runs {
            // The sample nearest the run's own time, never over what is already written.
            markMissing(upTo: Int((run.start.timeIntervalSince(first.start) * rate).rounded()))
            signal += run.microvolts
        }
        markMissing(upTo: (signal.count + perRecord - 1) / perRecord * perRecord)
        for (index, offset) in stride(from: 0, to: signal.count, by: perRecord).enumerated() {
            records.append(
                Record(
                    onset: firstOnset + Double(index) * duration,
                    samples: signal[offset..<(offset + perRecord)],
                    annotations: ""
                )
            )
        }
        if let acceleration = EDFAcceleration(
            recording.acceleration,
            origin: first.start,
            duration: duration,
            records: records.count
        ) {
            accelerationPerRecord = acceleration.perRecord
            for index in records.indices {
                let range = (index * acceleration.perRecord)..<((index + 1) * acceleration.perRecord)
                records[index].acceleration = acceleration.axes.map { $0[range] }
            }
            marks += acceleration.missing.map { gap in
                (firstOnset + gap.onset, "no ACC\(Self.durationMark)\(Self.number(gap.seconds))")
            }
        }
        place(marks)
    }

    /// Separates an annotation's onset from its duration in a TAL (the text is put after it by ``tal(_:_:)``).
    static let durationMark = "\u{15}"

    /// Each record's time-keeping annotation, and each mark in the last record that began by its time.
    private mutating func place(_ marks: [(time: Double, text: String)]) {
        for index in records.indices { records[index].annotations = Self.tal(records[index].onset, "") }
        for mark in marks.sorted(by: { $0.time < $1.time }) {
            let index = records.lastIndex { $0.onset <= mark.time } ?? 0
            if let split = mark.text.range(of: Self.durationMark) {
                // `text␕duration`: the duration goes between the onset and the text.
                let duration = String(mark.text[split.upperBound...])
                records[index].annotations += Self.tal(mark.time, String(mark.text[..<split.lowerBound]), duration)
            } else {
                records[index].annotations += Self.tal(mark.time, mark.text)
            }
        }
        let longest = records.map(\.annotations.utf8.count).max() ?? 0
        annotationBytes = max(2, (longest + 1) / 2 * 2)
    }

    /// A time-stamped annotation list: `+onset␕duration␔text␔␀` (no duration: `+onset␔text␔␀`; a time-keeping one
    /// has no text: `+onset␔␔␀`).
    static func tal(_ onset: Double, _ text: String, _ duration: String? = nil) -> String {
        (onset < 0 ? "-" : "+") + number(abs(onset)) + (duration.map { "\u{15}" + $0 } ?? "") + "\u{14}" + text
            + "\u{14}\u{0}"
    }

    /// Seconds with up to six decimals, without trailing zeros.
    static func number(_ seconds: Double) -> String {
        var text = String(format: "%.6f", seconds)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

enum EDFRecordingRates {
    /// Rates an ECG sensor records at.
    static let plausible: ClosedRange<Double> = 50...1000
}
