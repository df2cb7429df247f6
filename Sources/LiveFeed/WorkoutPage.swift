import Foundation

/// One heart-rate point of a chart: seconds since 1970 and beats a minute.
public struct ChartPoint: Codable, Sendable, Equatable {
    public var t: Double
    public var bpm: Double

    public init(t: Double, bpm: Double) {
        self.t = t
        self.bpm = bpm
    }
}

/// A finished workout in the list.
public struct WorkoutSummary: Codable, Sendable, Equatable {
    public var id: String
    public var activity: String
    /// Start and end in seconds since 1970.
    public var start: Double
    public var end: Double
    /// Seconds without pauses.
    public var duration: Double
    /// nil when privacy hides heart rate, or the workout has none.
    public var averageHeartRate: Double?
    public var maximumHeartRate: Double?

    public init(
        id: String,
        activity: String,
        start: Double,
        end: Double,
        duration: Double,
        averageHeartRate: Double? = nil,
        maximumHeartRate: Double? = nil
    ) {
        self.id = id
        self.activity = activity
        self.start = start
        self.end = end
        self.duration = duration
        self.averageHeartRate = averageHeartRate
        self.maximumHeartRate = maximumHeartRate
    }
}

/// A finished workout's page: its summary, the heart rate of each minute, time in zones, HRV and the files it
/// exports to. Without heart rate (privacy) only the summary is filled.
public struct WorkoutDetail: Codable, Sendable, Equatable {
    public var summary: WorkoutSummary
    /// The average heart rate of each minute; nil for a minute without one.
    public var heartRatePerMinute: [Double?]
    public var zones: [Zone]
    public var secondsBelowZones: Double?
    public var hrv: HRV?
    /// Banister's TRIMP.
    public var trimp: Double?
    public var energyKilojoules: Double?
    public var energyEstimated: Bool?
    /// The export formats offered (`fit`, `tcx`, `csv`, `rr`); empty when privacy hides heart rate.
    public var exports: [String]

    public struct Zone: Codable, Sendable, Equatable {
        public var number: Int
        public var lower: Double
        public var upper: Double?
        public var seconds: Double
        public var colour: String

        public init(number: Int, lower: Double, upper: Double?, seconds: Double) {
            self.number = number
            self.lower = lower
            self.upper = upper
            self.seconds = seconds
            colour = ZoneColour.css(number)
        }
    }

    public struct HRV: Codable, Sendable, Equatable {
        public var rmssd: Double
        public var sdnn: Double
        public var meanNN: Double
        public var pnn50: Double
        public var beats: Int
        public var corrected: Int

        public init(rmssd: Double, sdnn: Double, meanNN: Double, pnn50: Double, beats: Int, corrected: Int) {
            self.rmssd = rmssd
            self.sdnn = sdnn
            self.meanNN = meanNN
            self.pnn50 = pnn50
            self.beats = beats
            self.corrected = corrected
        }
    }

    public init(
        summary: WorkoutSummary,
        heartRatePerMinute: [Double?] = [],
        zones: [Zone] = [],
        secondsBelowZones: Double? = nil,
        hrv: HRV? = nil,
        trimp: Double? = nil,
        energyKilojoules: Double? = nil,
        energyEstimated: Bool? = nil,
        exports: [String] = []
    ) {
        self.summary = summary
        self.heartRatePerMinute = heartRatePerMinute
        self.zones = zones
        self.secondsBelowZones = secondsBelowZones
        self.hrv = hrv
        self.trimp = trimp
        self.energyKilojoules = energyKilojoules
        self.energyEstimated = energyEstimated
        self.exports = exports
    }
}

/// An exported workout file, its bytes coming as they are made.
public struct ExportedFile: Sendable {
    public var name: String
    public var contentType: String
    public var chunks: ExportChunks

    public init(name: String, contentType: String, chunks: ExportChunks) {
        self.name = name
        self.contentType = contentType
        self.chunks = chunks
    }
}

/// Why a workout's file or analysis was not made: another export is under way (`retry`: ask again later), or the
/// workout is too large.
public struct WorkoutRefusal: Error, Sendable, CustomStringConvertible {
    public var description: String
    public var retry: Bool

    public init(_ description: String, retry: Bool) {
        self.description = description
        self.retry = retry
    }
}
