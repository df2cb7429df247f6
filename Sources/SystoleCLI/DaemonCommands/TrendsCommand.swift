import ArgumentParser
import DBus
import Foundation

/// `systole trends [--days N | --from DAY] [--to DAY] [--athlete NAME] [--json | --csv]`: training load, fitness,
/// fatigue and form per day, as a terminal chart.
struct TrendsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trends",
        abstract: "Training load, fitness, fatigue, form and resting heart rate over days (a chart, --json, --csv).",
        discussion: """
            Each day's training load is the TRIMP of its workouts (recorded and imported), for your [profile]. \
            Fitness (CTL) and fatigue (ATL) are its exponentially weighted averages over 42 and 7 days, counted \
            from your first workout; form (TSB) is yesterday's fitness less yesterday's fatigue, as GoldenCheetah \
            and intervals.icu chart them. A day's resting heart rate is the lowest 5-minute mean heart rate of its \
            workouts. The last day is set against your goals ([profile] goal_workouts, goal_zone_minutes, \
            goal_energy_kcal). Days are systoled's calendar days. See docs/trends.md.
            """
    )

    @Option(help: "The number of days to show, ending with --to (default 90).") var days: Int?
    @Option(help: "The first day, as 2026-09-01 (instead of --days; 2000 to 2099).") var from: String?
    @Option(help: "The last day, as 2026-11-29 (default today).") var to: String?
    @Option(help: "An athlete's workouts ([athletes]); default the workouts of no athlete.") var athlete: String?
    @Flag(help: "Print JSON: one object per day.") var json = false
    @Flag(help: "Print CSV: a header, then one row per day.") var csv = false
    @OptionGroup var daemon: ControlOptions

    func validate() throws {
        if json, csv { throw ValidationError("give --json or --csv, not both") }
        if days != nil, from != nil { throw ValidationError("give --days or --from, not both") }
        if let days, !(1...3_660).contains(days) { throw ValidationError("--days takes 1 to 3660") }
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, Self.day(value) == nil {
                throw ValidationError("\(name) takes a day from 2000-01-01 to 2099-12-31, like 2026-11-29")
            }
        }
    }

    /// `2026-11-29` as noon of that day in this machine's time zone: the same calendar day in systoled's, unless the
    /// two lie more than eleven hours apart.
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
            (2000...2099).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: 12)
        guard let date = Calendar.current.date(from: components),
            Calendar.current.component(.day, from: date) == day
        else { return nil }
        return date
    }

    func run() async throws {
        let noon = Calendar.current.date(bySettingHour: 12, minute: 0, second: 0, of: Date()) ?? Date()
        let end = to.flatMap(Self.day) ?? noon
        let start = from.flatMap(Self.day) ?? end.addingTimeInterval(-Double((days ?? 90) - 1) * 86_400)
        guard start <= end else { throw CommandFailure.usage("--from must not be after --to") }
        let reply = try await daemon.connect().call(
            "GetTrends",
            [.double(start.timeIntervalSince1970), .double(end.timeIntervalSince1970), .string(athlete ?? "")],
            timeout: .seconds(120)
        )
        let trends = TrendDays(reply.first?.map ?? [:])
        if json {
            printJSON(trends.jsonObject)
        } else if csv {
            print("day,load,fitness,fatigue,form,workouts,resting_hr,energy_kj,zone_minutes")
            for row in trends.rows { print(row.csv) }
        } else {
            for line in trends.chart() { print(line) }
        }
    }
}
