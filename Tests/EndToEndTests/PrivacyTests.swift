import ControlAPI
import DBus
import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// Who may control systoled and see health values, tried as a hostile local user would: a private dbus-daemon with
/// the machine's own system-bus policies (system.conf: calls denied, signals delivered to anyone who asks) plus
/// the policy file systoled installs; systoled and the simulator run as root (this test), the attacker as
/// `nobody`, a permitted user as `nobody` in the policy's group.
@Suite(.serialized) struct PrivacyTests {
    /// What bluetoothd's own policy file allows root on a system bus (`bluetooth.conf`): own `org.bluez`, be
    /// called, and call agents and GATT applications.
    static let bluetoothdPolicy = """
        <policy user="root">
          <allow own="org.bluez"/>
          <allow send_destination="org.bluez"/>
          <allow send_interface="org.bluez.Agent1"/>
          <allow send_interface="org.bluez.GattProfile1"/>
          <allow send_interface="org.freedesktop.DBus.ObjectManager"/>
          <allow send_interface="org.freedesktop.DBus.Properties"/>
        </policy>
        """

    /// The policies of systemd/org.systole.Daemon.conf, with its group renamed to `group`.
    static func systolePolicy(group: String) throws -> String {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/org.systole.Daemon.conf")
        let text = try String(contentsOf: file, encoding: .utf8)
        let policies = PrivateBus.policies(in: text)
        try #require(policies.count >= 3, "the policy file has no policies")
        return policies.joined(separator: "\n").replacingOccurrences(
            of: #"group="systole""#,
            with: #"group="\#(group)""#
        )
    }

    /// The group that stands for `systole`: that one when the machine has it, else an existing group `nobody` is
    /// not in (the policy is the same with another name; the machine's groups are not changed).
    static func permittedGroup() throws -> (name: String, id: gid_t) {
        for name in ["systole", "users", "staff", "src", "games"] {
            guard let entry = getgrnam(name) else { continue }
            let id = entry.pointee.gr_gid
            var members: [String] = []
            var member = entry.pointee.gr_mem
            while let pointer = member?.pointee {
                members.append(String(cString: pointer))
                member = member?.advanced(by: 1)
            }
            if id != 65534, !members.contains("nobody") { return (name, id) }
        }
        throw Unavailable(description: "no group to stand for 'systole' (tried systole, users, staff, src, games)")
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// systoled and the simulator on a bus with the system bus's policies and systoled's, and copies of the
    /// binaries that other users can run.
    final class Setup: @unchecked Sendable {
        let harness: DaemonHarness
        let group: (name: String, id: gid_t)
        var daemon: DaemonProcess { harness.daemon }
        var bus: PrivateBus { harness.bus }
        var folder: URL { harness.folder }

        init() async throws {
            let group = try PrivacyTests.permittedGroup()
            self.group = group
            var options = DaemonHarness.Options()
            options.name = "systoled-privacy"
            options.busLikeSystemBus = true
            options.busConfiguration =
                PrivacyTests.bluetoothdPolicy + (try PrivacyTests.systolePolicy(group: group.name))
            harness = try await DaemonHarness.start(options)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: harness.folder.path)
            for name in ["systole", "bus-listen-probe"] {
                let copy = harness.folder.appendingPathComponent(name).path
                try FileManager.default.copyItem(
                    atPath: CommandRunner.productsDirectory.appendingPathComponent(name).path,
                    toPath: copy
                )
            }
        }

        enum Who {
            case root
            case nobody
            case member
        }

        /// Runs a command as `who`: the binaries from the copies other users can read, other programs by path.
        func run(_ who: Who, _ command: String, _ arguments: [String]) async throws -> CommandRunner.Result {
            let program = command.hasPrefix("/") ? command : folder.appendingPathComponent(command).path
            switch who {
            case .root:
                return try await CommandRunner.run(program, arguments)
            case .nobody:
                return try await CommandRunner.run(
                    "/usr/bin/setpriv",
                    ["--reuid=nobody", "--regid=nogroup", "--clear-groups", program] + arguments
                )
            case .member:
                return try await CommandRunner.run(
                    "/usr/bin/setpriv",
                    ["--reuid=nobody", "--regid=nogroup", "--groups=\(group.id)", program] + arguments
                )
            }
        }

        /// Runs `systole` as `who` against this daemon.
        func systoleAs(_ who: Who, _ arguments: String...) async throws -> CommandRunner.Result {
            try await run(who, "systole", arguments + ["--bus", bus.address])
        }

        /// Calls a method with `dbus-send`, as `who`; returns what it printed to standard error (empty: answered).
        func dbusSend(_ who: Who, _ interface: String, _ member: String, _ arguments: [String]) async throws -> String {
            let result = try await run(
                who,
                "/usr/bin/dbus-send",
                [
                    "--bus=\(bus.address)", "--print-reply", "--reply-timeout=5000",
                    "--dest=\(ControlAPI.busName)", ControlAPI.objectPath, "\(interface).\(member)",
                ] + arguments
            )
            return result.standardError
        }

        func stop() { harness.stop() }
    }

    /// Every method of the control API, the standard interfaces included, with arguments of the right types.
    static let calls: [(interface: String, member: String, arguments: [String])] = [
        (ControlAPI.interface, "StartWorkout", ["string:running", "string:outdoor"]),
        (ControlAPI.interface, "PauseWorkout", []),
        (ControlAPI.interface, "ResumeWorkout", []),
        (ControlAPI.interface, "EndWorkout", []),
        (ControlAPI.interface, "CancelWorkout", []),
        (ControlAPI.interface, "AddSample", ["string:dietaryWater", "double:250", "string:mL"]),
        (ControlAPI.interface, "ListSensors", []),
        (ControlAPI.interface, "Scan", ["double:1"]),
        (ControlAPI.interface, "Pair", ["string:00:11:22:33:44:55"]),
        (ControlAPI.interface, "Forget", ["string:00:11:22:33:44:55"]),
        (ControlAPI.interface, "ListWorkouts", []),
        (ControlAPI.interface, "GetWorkout", ["string:0"]),
        (ControlAPI.interface, "Statistics", ["string:heartRate", "string:1d", "double:0", "double:2e9"]),
        (ControlAPI.interface, "AddLap", []),
        (ControlAPI.interface, "AddMarker", ["string:x"]),
        (ControlAPI.interface, "ExportWorkout", ["string:0", "string:csv"]),
        (ControlAPI.interface, "DeleteWorkout", ["string:0"]),
        // dbus-send cannot write its argument's type; the bus refuses before it looks at the arguments.
        (ControlAPI.interface, "ImportWorkouts", []),
        (ControlAPI.interface, "GetTrends", ["double:0", "double:2e9", "string:"]),
        (ControlAPI.interface, "GetProfile", []),
        (ControlAPI.interface, "GetWebPage", []),
        ("org.freedesktop.DBus.Properties", "GetAll", ["string:\(ControlAPI.interface)"]),
        ("org.freedesktop.DBus.Properties", "Get", ["string:\(ControlAPI.interface)", "string:HeartRate"]),
        ("org.freedesktop.DBus.Introspectable", "Introspect", []),
        ("org.freedesktop.DBus.Peer", "Ping", []),
    ]

    @Test func anotherUserCanNeitherCallNorListenWhileRootAndTheGroupCan() async throws {
        let s = try await Setup()
        defer { s.stop() }
        // The attacker: every method is refused by the bus, whatever its arguments.
        for call in Self.calls {
            let error = try await s.dbusSend(.nobody, call.interface, call.member, call.arguments)
            #expect(
                error.contains("org.freedesktop.DBus.Error.AccessDenied"),
                "nobody called \(call.interface).\(call.member): \(error)"
            )
        }
        // Nor by systoled's unique name, nor any other object it exports (its pairing agent): the policy names
        // org.systole.Daemon, and the bus applies it to every message to the connection that owns it.
        let uniqueName = try await s.run(
            .root,
            "/usr/bin/dbus-send",
            [
                "--bus=\(s.bus.address)", "--print-reply=literal", "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetNameOwner", "string:\(ControlAPI.busName)",
            ]
        ).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(uniqueName.hasPrefix(":"), "no owner: \(uniqueName)")
        for (path, member) in [
            (ControlAPI.objectPath, "\(ControlAPI.interface).ListSensors"),
            ("/org/systole/agent", "org.bluez.Agent1.RequestAuthorization"),
        ] {
            let byUniqueName = try await s.run(
                .nobody,
                "/usr/bin/dbus-send",
                ["--bus=\(s.bus.address)", "--print-reply", "--dest=\(uniqueName)", path, member]
                    + (member.hasSuffix("RequestAuthorization")
                        ? ["objpath:/org/bluez/hci0/dev_00_11_22_33_44_55"] : [])
            )
            #expect(
                byUniqueName.standardError.contains("org.freedesktop.DBus.Error.AccessDenied"),
                "nobody called \(member) at \(uniqueName): \(byUniqueName.standardError)"
            )
        }
        let denied = try await s.systoleAs(.nobody, "status")
        #expect(denied.status == 1)
        #expect(denied.standardError.contains("not permitted to control systoled"), "\(denied.standardError)")

        // Listeners start before the workout: the attacker, root and a group member, each with a plain AddMatch
        // for systoled's PropertiesChanged (heart rate, sensors, the workout's statistics). They listen until told
        // to stop (a file), at most as long as the test may take.
        let files = s.folder.appendingPathComponent("probes")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: files.path)
        let stop = files.appendingPathComponent("stop").path
        func probe(_ name: String) -> [String] {
            [s.bus.address, "300", files.appendingPathComponent(name).path, stop]
        }
        async let attacker = s.run(.nobody, "bus-listen-probe", probe("attacker"))
        async let owner = s.run(.root, "bus-listen-probe", probe("owner"))
        async let member = s.run(.member, "bus-listen-probe", probe("member"))
        // Stopped however the test ends (this runs before the listeners are awaited).
        defer { _ = FileManager.default.createFile(atPath: stop, contents: Data()) }
        try await waitUntil("the three listeners' matches in place") {
            ["attacker", "owner", "member"].allSatisfy {
                FileManager.default.fileExists(atPath: files.appendingPathComponent($0).path)
            }
        }

        // Root and the group control it: a workout with heart rate.
        let start = try await s.systoleAs(.member, "start", "--activity", "running")
        #expect(start.status == 0, "a group member could not start a workout: \(start.standardError)")
        #expect(start.standardOutput.contains("Heart rate: available"))
        try await s.daemon.waitForLiveLog(4)
        let status = try await s.systoleAs(.root, "status")
        #expect(status.status == 0)
        #expect(status.standardOutput.contains(" bpm"), "\(status.standardOutput)")
        _ = FileManager.default.createFile(atPath: stop, contents: Data())

        let heard = (attacker: try await attacker, owner: try await owner, member: try await member)
        #expect(heard.attacker.status == 0, "\(heard.attacker.standardError)")
        #expect(
            heard.attacker.standardOutput.hasSuffix("received 0\n"),
            "nobody received systoled's signals: \(heard.attacker.standardOutput.prefix(2000))"
        )
        #expect(!heard.attacker.standardOutput.contains("bpm"))
        for (who, result) in [("root", heard.owner), ("a group member", heard.member)] {
            let signals = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("signal ") }
            #expect(signals.count >= 2, "\(who) received \(signals.count) signals: \(result.standardError)")
            #expect(signals.contains { $0.contains("bpm") }, "\(who) saw no heart rate")
        }
        #expect(try await s.systoleAs(.member, "end").status == 0)
        // systemd's status line (readable by every user through `systemctl status`) carries no health value.
        let statuses = try await s.daemon.notify.waitFor { $0.hasPrefix("STATUS=running · ") }
        #expect(statuses != nil, "no running status")
        #expect(statuses?.contains { $0.contains("bpm") } == false, "\(statuses ?? [])")
    }

    /// `systole tail` for a user outside the group: the live log's folder is closed to them (as /var/log/systole is,
    /// 0750), so the file looks missing to a stat; the command must say it is a permission matter, not "is systoled
    /// running?". A member reads it.
    @Test func theLiveLogIsForTheGroupOnlyAndAnOutsiderIsToldSo() async throws {
        let s = try await Setup()
        defer { s.stop() }
        let logFolder = s.daemon.folder.path
        #expect(try await s.systoleAs(.root, "start").status == 0)
        try await s.daemon.waitForLiveLog(2)
        // As systemd's LogsDirectory= leaves it: root:systole, 0750; the log itself 0640 in the group.
        for (path, mode) in [(logFolder, 0o750), (s.daemon.liveLogPath, 0o640)] {
            #expect(chown(path, 0, s.group.id) == 0 && chmod(path, mode_t(mode)) == 0, "\(path): errno \(errno)")
        }
        let outsider = try await s.run(.nobody, "systole", ["tail", "--file", s.daemon.liveLogPath])
        #expect(outsider.status == 1)
        #expect(outsider.standardError.contains("permission denied"), "\(outsider.standardError)")
        #expect(outsider.standardError.contains("group 'systole'"), "\(outsider.standardError)")
        #expect(!outsider.standardError.contains("does not exist"), "\(outsider.standardError)")
        #expect(!outsider.standardOutput.contains("bpm="))
        let member = try await s.run(.member, "systole", ["tail", "--file", s.daemon.liveLogPath, "-n", "2"])
        #expect(member.status == 0, "\(member.standardError)")
        #expect(member.standardOutput.contains("bpm="), "\(member.standardOutput)")
        let missing = try await s.run(.member, "systole", ["tail", "--file", logFolder + "/elsewhere.log"])
        #expect(missing.standardError.contains("does not exist"), "\(missing.standardError)")
    }

    @Test func filesAndFoldersSystoledCreatesAreForItsGroupOnlyWhateverStartsIt() async throws {
        // This test process has umask 022, as a shell usually has: systoled must not pass it on.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systoled-modes-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--rate", "4"])
        defer { simulator.stop() }
        let store = folder.appendingPathComponent("state/health.sqlite").path
        let liveLog = folder.appendingPathComponent("logs/live.log").path
        let daemon = try await DaemonProcess.start(
            bus: bus,
            folder: folder.appendingPathComponent("daemon"),
            ["--store", store, "--live-log", liveLog]
        )
        defer { daemon.stopNow() }
        let start = try await CommandRunner.run("systole", ["start", "--bus", bus.address])
        #expect(start.status == 0, "\(start.standardError)")
        try await waitUntil("a reading in the live log") {
            ((try? String(contentsOfFile: liveLog, encoding: .utf8)) ?? "").contains(" bpm=")
        }
        #expect(try await CommandRunner.run("systole", ["end", "--bus", bus.address]).status == 0)
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int).map { $0 & 0o777 }
        }
        for path in [store, store + "-wal", store + "-shm", liveLog] {
            #expect(mode(path) == 0o640, "\(path) has mode \(String(mode(path) ?? 0, radix: 8))")
        }
        for path in [(store as NSString).deletingLastPathComponent, (liveLog as NSString).deletingLastPathComponent] {
            #expect(mode(path) == 0o750, "\(path) has mode \(String(mode(path) ?? 0, radix: 8))")
        }
    }
}
