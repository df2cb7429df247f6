import DBus
import Foundation
import WorkoutAnalysis
import WorkoutKit

/// A workout's analysis as `GetWorkout` returns it beside the workout's own values (docs/dbus-api.md): laps,
/// markers, HRV, zones, TRIMP and energy, measured or estimated.
public enum AnalysisValues {
    public static func values(of recording: ActivityRecording, profile: AthleteProfile) -> [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        values["laps"] = .array(
            .propertyMap,
            recording.lapsOrWhole.enumerated().map { index, lap in
                var lapValues: [String: DBusValue] = [
                    "number": .uint32(UInt32(index + 1)),
                    "start": .double(lap.start.timeIntervalSince1970),
                    "end": .double(lap.end.timeIntervalSince1970),
                    "duration": .double(recording.timerTime(of: lap)),
                ]
                if let heartRate = recording.heartRate(in: lap) {
                    lapValues["averageHeartRate"] = .double(heartRate.average)
                    lapValues["maximumHeartRate"] = .double(heartRate.maximum)
                }
                return .propertyMap(lapValues)
            }
        )
        values["markers"] = .array(
            .propertyMap,
            recording.markers.map { marker in
                .propertyMap([
                    "time": .double(marker.date.timeIntervalSince1970),
                    "elapsed": .double(recording.elapsed(at: marker.date)),
                    "text": .string(marker.text),
                ])
            }
        )
        if let hrv = HeartRateVariability.workout(recording) { values["hrv"] = .propertyMap(Self.values(of: hrv)) }
        values["hrvWindows"] = .array(
            .propertyMap,
            HeartRateVariability.windows(recording).map { .propertyMap(Self.values(of: $0)) }
        )
        values.merge(ecgValues(recording)) { $1 }
        let zones = HeartRateZones(recording, profile: profile)
        values["zoneBasis"] = .string(zones.basis.rawValue)
        values["secondsBelowZones"] = .double(zones.secondsBelow)
        values["zones"] = .array(
            .propertyMap,
            zones.zones.map { zone in
                var zoneValues: [String: DBusValue] = [
                    "number": .uint32(UInt32(zone.number)),
                    "lower": .double(zone.lower),
                    "seconds": .double(zone.seconds),
                ]
                zoneValues["upper"] = zone.upper.map(DBusValue.double)
                return .propertyMap(zoneValues)
            }
        )
        values["trimp"] = .double(TrainingLoad.trimp(recording, profile: profile))
        if let energy = recording.energy {
            values["energy"] = .propertyMap([
                "kilojoules": .double(energy.kilojoules), "estimated": .boolean(energy.isEstimated),
            ])
        } else if let estimate = EnergyEstimate.kilojoules(recording, profile: profile) {
            // Recorded before the profile allowed an estimate: estimated now, with today's profile.
            values["energy"] = .propertyMap(["kilojoules": .double(estimate), "estimated": .boolean(true)])
        } else {
            values["energyUnavailable"] = .string(
                EnergyEstimate.unavailableReason(profile) ?? "no heart rate to estimate energy from"
            )
        }
        return values
    }

    /// With ECG: the HRV of the beats its R-peaks make (`hrvFromECG`), and how their intervals agree with the
    /// strap's (`rrAgreement`).
    static func ecgValues(_ recording: ActivityRecording) -> [String: DBusValue] {
        guard !recording.electrocardiogram.isEmpty else { return [:] }
        let analysis = ElectrocardiogramAnalysis(recording.electrocardiogram)
        var fromECG = recording
        fromECG.beats = analysis.beats
        var values: [String: DBusValue] = [:]
        if let hrv = HeartRateVariability.workout(fromECG) { values["hrvFromECG"] = .propertyMap(Self.values(of: hrv)) }
        if let rate = analysis.rate, let agreement = RRAgreement(strap: recording.beats, ecg: fromECG.beats, rate: rate)
        {
            values["rrAgreement"] = .propertyMap([
                "pairedBeats": .uint32(UInt32(clamping: agreement.pairedBeats)),
                "ecgBeats": .uint32(UInt32(clamping: agreement.ecgBeats)),
                "meanDifference": .double(agreement.meanDifference),
                "withinTolerance": .double(agreement.withinTolerance),
                "tolerance": .double(agreement.tolerance),
            ])
        }
        return values
    }

    public static func values(of hrv: HeartRateVariability) -> [String: DBusValue] {
        [
            "start": .double(hrv.start.timeIntervalSince1970), "end": .double(hrv.end.timeIntervalSince1970),
            "meanNN": .double(hrv.meanNN), "sdnn": .double(hrv.sdnn), "rmssd": .double(hrv.rmssd),
            "pnn50": .double(hrv.pnn50), "beats": .uint32(UInt32(clamping: hrv.beatCount)),
            "corrected": .uint32(UInt32(clamping: hrv.correctedBeats)),
        ]
    }

    /// The effective profile, each value with where it came from (`systole profile`).
    /// The effective profile, each value with its source (`GetProfile`).
    public static func values(of profile: AthleteProfile) -> [String: DBusValue] {
        func entry(_ value: DBusValue, _ source: String) -> DBusValue {
            .propertyMap(["value": value, "source": .string(source)])
        }
        var values: [String: DBusValue] = [:]
        values["age"] = profile.age.map { entry(.uint32(UInt32($0)), "configured") }
        values["sex"] = profile.sex.map { entry(.string($0.rawValue), "configured") }
        values["weight_kg"] = profile.weightKilograms.map { entry(.double($0), "configured") }
        let resting = profile.effectiveRestingHeartRate
        values["resting_hr"] = entry(.double(resting.value), "\(resting.source)")
        let maximum = profile.effectiveMaxHeartRate
        values["max_hr"] = entry(.double(maximum.value), "\(maximum.source)")
        let basis = profile.effectiveZoneBasis
        values["zones"] = entry(.string(basis.value.rawValue), "\(basis.source)")
        values["zoneBounds"] = .array(.double, HeartRateZones(profile: profile).zones.map { .double($0.lower) })
        values["energyEstimate"] = .string(
            EnergyEstimate.unavailableReason(profile)
                ?? "Keytel et al. 2005, \(profile.sex.map(\.rawValue) ?? "mean of the female and male equations")"
        )
        return values
    }
}
