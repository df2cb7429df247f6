import ControlAPI
import DBus
import Foundation
import SQLiteStore
import SafeText
import WorkoutAnalysis
import WorkoutKit

/// The store's workouts and statistics: the list, one workout with its analysis and chart, its export into a
/// file descriptor the caller passes, its deletion, and statistics over any span.
struct HistoryControl: ControlMethods {
    let store: SQLiteHealthStore
    let exporter: WorkoutExporter
    /// The athlete's profile the analysis of a workout uses (zones, energy).
    let profile: AthleteProfile

    func addMethods(to methods: inout [DBusMethod]) {
        let map = DBusType.propertyMap
        methods += [
            DBusMethod("ListWorkouts", outputs: [("workouts", .array(map))]) { _ throws(DBusError) in
                let all = try await ControlCall.storeCall { try await self.store.workouts() }
                return [.array(map, all.map { .propertyMap(WorkoutValues.values(of: $0)) })]
            },
            DBusMethod("GetWorkout", inputs: [("id", .string)], outputs: [("workout", map)]) {
                call throws(DBusError) in try await self.getWorkout(call)
            },
            DBusMethod(
                "ExportWorkout",
                inputs: [("id", .string), ("format", .string), ("file", .unixFD)],
                outputs: [("fileName", .string), ("size", .uint64)]
            ) { call throws(DBusError) in try await self.exportWorkout(call) },
            DBusMethod("DeleteWorkout", inputs: [("id", .string)]) { call throws(DBusError) in
                let workout = try await self.workout(matching: try ControlCall.text(call, 0, "a workout id"))
                _ = try await ControlCall.storeCall { try await self.store.deleteWorkout(workout.id) }
                return []
            },
            DBusMethod(
                "Statistics",
                inputs: [("type", .string), ("interval", .string), ("from", .double), ("to", .double)],
                outputs: [("buckets", .array(map))]
            ) { call throws(DBusError) in try await self.statistics(call) },
        ]
    }

    /// The finished workout whose id starts with `text`; NotFound when none does, InvalidArguments when several.
    private func workout(matching text: String) async throws(DBusError) -> Workout {
        guard !text.isEmpty else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "give a workout id (its first characters are enough); list them with 'systole workouts'"
            )
        }
        let matching = try await ControlCall.storeCall { try await self.store.workouts(idPrefix: text) }.filter {
            $0.id.uuidString.lowercased().hasPrefix(text.lowercased())
        }
        guard let workout = matching.first else {
            throw DBusError(
                name: ControlAPI.ErrorName.notFound,
                message: "no workout \(text.quotedExcerpt()); list them with 'systole workouts'"
            )
        }
        guard matching.count == 1 else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(matching.count) workouts start with \(text.quotedExcerpt()); give more of the id"
            )
        }
        return workout
    }

    /// The recording exports and analysis read, from the store (a chunk at a time, within
    /// ``SampleCollector/defaultLimit``).
    private func recording(of workout: Workout) async throws(DBusError) -> ActivityRecording {
        do {
            return try await ActivityRecording.read(workout, from: store)
        } catch let refusal as SampleCollector.TooLarge {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "\(refusal)")
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    /// Writes the file into the descriptor the caller passed (the write end of its pipe), and answers once it is
    /// all written, with the file's name and size: the caller checks it read as many bytes.
    private func exportWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        guard call.arguments.count == 3, case .unixFD(let fd) = call.arguments[2] else {
            for fd in call.arguments.flatMap(\.unixFDs) { close(fd) }
            throw DBusError(.invalidArgs, "ExportWorkout expects a workout id, a format and a file descriptor")
        }
        let format: ExportFormat
        let workout: Workout
        do throws(DBusError) {
            let text = try ControlCall.text(call, 0, "a workout id")
            let formatName = try ControlCall.text(call, 1, "a format")
            guard let known = ExportFormat(rawValue: formatName) else {
                throw ControlCall.unknown("format", formatName, known: ExportFormat.allCases.map(\.rawValue))
            }
            format = known
            workout = try await self.workout(matching: text)
        } catch {
            close(fd)
            throw error
        }
        do {
            let (name, size) = try await exporter.write(workout, as: format, into: fd)
            return [.string(name), .uint64(UInt64(size))]
        } catch let refusal as WorkoutExporter.Refusal {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "\(refusal)")
        } catch let stopped as DescriptorWriter.Failure {
            // The caller's end, not the store: its reader went away, stalled, or the descriptor takes no writing.
            throw DBusError(.failed, "the export stopped: \(stopped)")
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "the export failed: \(error)")
        }
    }

    private func getWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let workout = try await workout(matching: try ControlCall.text(call, 0, "a workout id"))
        var values = WorkoutValues.values(of: workout)
        var recording = try await recording(of: workout)
        // The ECG's HRV and its agreement with the strap's, when the workout has ECG.
        recording.electrocardiogram = try await ControlCall.storeCall {
            try await self.store.waveforms(.electrocardiogram, ofWorkout: workout.id)
        }
        values.merge(AnalysisValues.values(of: recording, profile: profile)) { $1 }
        let perMinute = try await ControlCall.storeCall {
            try await WorkoutChart.heartRatePerMinute(of: workout, in: self.store)
        }
        values["heartRatePerMinute"] = .array(.double, perMinute.map { .double($0 ?? .nan) })
        return [.propertyMap(values)]
    }

    private func statistics(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let typeName = try ControlCall.text(call, 0, "a sample type")
        let intervalName = try ControlCall.text(call, 1, "an interval")
        guard let type = QuantityType(identifier: typeName) else {
            throw ControlCall.unknown("sample type", typeName, known: QuantityType.known.map(\.identifier))
        }
        let interval: StatisticsInterval
        do {
            interval = try StatisticsRequest.interval(intervalName)
            let from = try StatisticsRequest.date(try call.argument(2, "from").double ?? .nan, "from")
            let to = try StatisticsRequest.date(try call.argument(3, "to").double ?? .nan, "to")
            try StatisticsRequest.checkRange(from: from, to: to, interval: interval)
            return try await buckets(of: type, from: from, to: to, interval: interval)
        } catch let refusal as StatisticsRequest.Refusal {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: refusal.message)
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.store, message: "\(error)")
        }
    }

    private func buckets(
        of type: QuantityType,
        from: Date,
        to: Date,
        interval: StatisticsInterval
    ) async throws(DBusError) -> [DBusValue] {
        let buckets = try await ControlCall.storeCall {
            try await self.store.statisticsCollection(of: type, from: from, to: to, anchor: from, interval: interval)
        }
        return [.array(.propertyMap, buckets.map { .propertyMap(WorkoutValues.values(of: $0)) })]
    }
}
