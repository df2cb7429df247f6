import Foundation

/// A single-lead ECG as an EDF+ file (European Data Format, Kemp & Olivan 2003), the format EDFbrowser, MNE,
/// pyedflib and most biosignal tools open: the ECG channel in µV at the rate measured from the sensor's clock, and
/// R-peaks as annotations.
///
/// Data records hold ``samplesPerRecord`` ECG samples; the record duration is that many samples at the measured
/// rate (130 samples of a 129.7 Hz strap last 1.002313 s), so a reader's rate is the measured one. The file is one
/// continuous signal (EDF+C, which every reader takes): each run of samples starts at the sample nearest its own
/// time, and a gap between runs, like the filling of the last record, holds 0 µV under an annotation `no ECG` that
/// spans it. Values are stored exactly (one digital unit per µV) when they fit 16 bits, else at the smallest whole
/// number of µV a unit that holds the largest.
public struct EDFRecording: Sendable {
    /// Samples of the ECG taken one after another at `rate`, without a gap.
    public struct Run: Sendable, Hashable {
        public var start: Date
        public var rate: Double
        public var microvolts: [Int32]

        public init(start: Date, rate: Double, microvolts: [Int32]) {
            self.start = start
            self.rate = rate
            self.microvolts = microvolts
        }
    }

    /// Acceleration along x, y and z in milli-g, taken one after another at `rate`, without a gap.
    public struct AccelerationRun: Sendable, Hashable {
        public var start: Date
        public var rate: Double
        public var x: [Int32]
        public var y: [Int32]
        public var z: [Int32]

        public init(start: Date, rate: Double, x: [Int32], y: [Int32], z: [Int32]) {
            self.start = start
            self.rate = rate
            self.x = x
            self.y = y
            self.z = z
        }
    }

    /// The ECG, in time order.
    public var runs: [Run]
    /// The accelerometer, in time order; empty when it was not recorded. EDF's records hold a whole number of
    /// samples of each signal, so the three axes are written on the records' own grid (the number of samples
    /// nearest to its rate, evenly spaced over each record), interpolated linearly between the samples on either
    /// side; 0 mg under an annotation `no ACC` where it was not recorded.
    public var acceleration: [AccelerationRun] = []
    /// Times of the R-peaks, written as annotations `R`.
    public var rPeaks: [Date]
    /// The athlete's name (EDF+'s patient name), when known.
    public var athlete: String?
    /// The sensor (EDF+'s equipment), e.g. `Polar H10 A0:9E:1A:12:34:56`.
    public var sensor: String
    /// The time zone the header's start date and time are written in (EDF gives local time).
    public var timeZone: TimeZone

    /// ECG samples in each data record.
    public static let samplesPerRecord = 130

    public init(runs: [Run], rPeaks: [Date], athlete: String?, sensor: String, timeZone: TimeZone = .current) {
        self.runs = runs
        self.rPeaks = rPeaks
        self.athlete = athlete
        self.sensor = sensor
        self.timeZone = timeZone
    }

    /// Why there is no file to write.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case noECG
        case implausibleRate(Double)

        public var description: String {
            switch self {
            case .noECG: "the workout holds no ECG"
            case .implausibleRate(let rate): "an ECG rate of \(rate) Hz, which no sensor records"
            }
        }
    }
}
