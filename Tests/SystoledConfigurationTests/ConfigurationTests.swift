import BlueZ
import DBus
import Foundation
import Glibc
import HeartRateSensors
import Testing
import WorkoutAnalysis
import WorkoutKit

@testable import SystoledConfiguration

@Suite struct ConfigurationTests {
    let environment = ["STATE_DIRECTORY": "/var/lib/systole", "LOGS_DIRECTORY": "/var/log/systole"]

    func configuration(_ text: String) throws(DaemonConfiguration.Error) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(environment: environment)
        try configuration.apply(text, file: "systoled.toml")
        return configuration
    }

    func error(_ text: String) -> DaemonConfiguration.Error? {
        do {
            _ = try configuration(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everySettingIsRead() throws {
        let text = """
            # systoled
            bus = "unix:path=/run/test-bus"   # a private bus
            adapter = "hci1"
            store = '/srv/systole/health.sqlite'
            sensors = [
                "A0:9E:1A:12:34:56",
                "any",
            ]
            sample_types = ["heartRate", "dietaryWater"]

            [live_log]
            path = "/srv/systole/live.log"
            format = "json"
            max_size = 1_048_576
            keep = 5
            privacy = "duration-only"

            [profile]
            age = 41
            sex = "male"
            weight_kg = 72.5
            resting_hr = 48
            max_hr = 186
            zones = "reserve"
            goal_energy_kcal = 450
            goal_zone_minutes = 45
            goal_workouts = 2
            """
        let c = try configuration(text)
        var profile = AthleteProfile(
            age: 41,
            sex: .male,
            weightKilograms: 72.5,
            restingHeartRate: 48,
            maxHeartRate: 186,
            zoneBasis: .heartRateReserve
        )
        profile.goals = DailyGoals(energyKilocalories: 450, zoneMinutes: 45, workouts: 2)
        #expect(c.profile == profile)
        #expect(c.bus == .address("unix:path=/run/test-bus"))
        #expect(c.adapter == "hci1")
        #expect(c.storePath == "/srv/systole/health.sqlite")
        #expect(c.sensors == [.address(try BluetoothAddress("A0:9E:1A:12:34:56")), .any])
        #expect(c.sampleTypes == [.heartRate, .dietaryWater])
        #expect(c.liveLogPath == "/srv/systole/live.log")
        #expect(c.liveLogFormat == .json)
        #expect(c.liveLogMaximumSize == 1_048_576)
        #expect(c.liveLogKeep == 5)
        #expect(c.privacy == .durationOnly)
    }

    @Test func theStoreTableSetsItsPathAndWhenCommitsAreSynced() throws {
        #expect(DaemonConfiguration(environment: [:]).storeSync == .second)
        var c = DaemonConfiguration(environment: [:])
        try c.apply("[store]\npath = \"/srv/h.sqlite\"\nsync = \"commit\"\n", file: "systoled.toml")
        #expect(c.storePath == "/srv/h.sqlite")
        #expect(c.storeSync == .commit)
        var d = DaemonConfiguration(environment: [:])
        try d.apply("store = \"/srv/old.sqlite\"\n", file: "systoled.toml")
        #expect(d.storePath == "/srv/old.sqlite")
        #expect(d.storeSync == .second)
    }

    @Test func defaultsFollowSystemdsDirectories() {
        let c = DaemonConfiguration(environment: ["STATE_DIRECTORY": "/var/lib/s1:/var/lib/s2", "LOGS_DIRECTORY": "/l"])
        #expect(c.storePath == "/var/lib/s1/health.sqlite")
        #expect(c.liveLogPath == "/l/live.log")
        #expect(c.bus == .system && c.sensors == [.any] && c.privacy == .full && c.adapter == nil)
    }

    @Test func mistakesNameTheLineAndWhatToDo() {
        let cases: [(String, Int, String)] = [
            ("bus = \"system\"\nfrobnicate = 1", 2, "unknown setting 'frobnicate'; known: bus, adapter, store"),
            ("[live_log]\nsize = 10", 2, "unknown setting 'size' in [live_log]; known: path, format, max_size"),
            (
                "[logging]\npath = \"/x\"", 2,
                "unknown table [logging]; the tables are [store], [live_log], [profile], [athletes], [bluetooth], [ecg], [http], [mqtt] and [replication]"
            ),
            ("[ecg]\nenabled = 1", 2, "enabled in [ecg] must be true or false, not an integer"),
            ("[ecg]\nacceleration_hz = 30", 2, "acceleration_hz in [ecg] must be 0 (off), 25, 50, 100 or 200"),
            ("[ecg]\nacceleration_hz = -1", 2, "acceleration_hz in [ecg] must be 0 (off), 25, 50, 100 or 200"),
            ("[ecg]\nacceleration_range_g = 16", 2, "acceleration_range_g in [ecg] must be 2, 4 or 8"),
            ("[ecg]\nrate = 130", 2, "unknown setting 'rate' in [ecg]; known: enabled, acceleration_hz"),
            ("[ecg]\n\"A0:9E:1A:00:00:01\" = \"yes\"", 2, "A0:9E:1A:00:00:01 in [ecg] must be true or false"),
            (
                "[ecg]\n\"A0:9E:1A:00:00:01\" = true\n\"a0:9e:1a:00:00:01\" = false", 3,
                "A0:9E:1A:00:00:01 is set twice in [ecg]"
            ),
            ("[profile]\nage = 7", 2, "profile.age is in years, from 10 to 100"),
            ("[profile]\nage = 40.5", 2, "age must be a whole number, not a number"),
            ("[profile]\nsex = \"x\"", 2, "profile.sex must be \"female\" or \"male\", not 'x'"),
            ("[profile]\nweight_kg = 1e9", 2, "profile.weight_kg is in kilograms, from 20 to 300"),
            ("[profile]\nweight_kg = nan", 2, "'nan' is not a value"),
            ("[profile]\nresting_hr = 0", 2, "profile.resting_hr is in beats a minute, from 25 to 120"),
            ("[profile]\nmax_hr = 300", 2, "profile.max_hr is in beats a minute, from 100 to 240"),
            ("[profile]\nzones = \"lactate\"", 2, "profile.zones must be \"max_hr\""),
            ("[profile]\ngoal_energy_kcal = 1e6", 2, "profile.goal_energy_kcal is the day's active energy in kcal"),
            ("[profile]\ngoal_zone_minutes = 0", 2, "profile.goal_zone_minutes is the day's minutes in zone 2"),
            ("[profile]\ngoal_workouts = 2.5", 2, "goal_workouts must be a whole number"),
            ("[profile]\ngoal_workouts = 11", 2, "profile.goal_workouts is the day's workouts, from 1 to 10"),
            ("[profile]\nheight = 180", 2, "unknown setting 'height' in [profile]; known: age, sex, weight_kg"),
            ("[profile]\nresting_hr = 110\nmax_hr = 120", 3, "[profile]: max_hr (120.0) must be at least 20 above"),
            ("bus = \"sytem\"", 1, "bus must be \"system\", \"session\" or a D-Bus address"),
            ("adapter = \"bluetooth0\"", 1, "adapter must be a name like \"hci0\""),
            ("sensors = [\"12:34\"]", 1, "'12:34' is not a sensor: use an address like"),
            ("sensors = []", 1, "sensors is empty"),
            ("sample_types = [\"steps\"]", 1, "unknown sample type 'steps'; known: heartRate"),
            ("store = \"health.sqlite\"", 1, "store must be an absolute path"),
            ("[store]\npath = \"health.sqlite\"", 2, "path in [store] must be an absolute path"),
            ("[store]\nsync = \"always\"", 2, "sync in [store] must be \"second\" (synced to the disk at most"),
            ("[store]\nsync = 1", 2, "sync must be a string in quotes, not an integer"),
            ("[store]\nfsync = \"commit\"", 2, "unknown setting 'fsync' in [store]; known: path, sync"),
            (
                "store = \"/a/h.sqlite\"\n\n[store]\nsync = \"commit\"", 4,
                "'store' is set both as a path (line 1) and as the [store] table (line 4); write the path as path"
            ),
            ("\n\n[live_log]\nmax_size = \"big\"", 4, "max_size must be a whole number, not a string"),
            ("[live_log]\nprivacy = \"none\"", 2, "privacy must be \"full\" or \"duration-only\""),
            ("bus = system", 1, "'system' is not a value: strings need quotes"),
            ("bus = \"system\"\nbus = \"session\"", 2, "'bus' is set twice"),
            ("live_log.path = \"/x\"", 1, "dotted keys are not used here"),
            ("sensors = [\"any\"", 1, "an array is not closed"),
            ("bus = \"system", 1, "a string is not closed"),
            ("bus = \"system\" store = \"/x\"", 1, "unexpected text after the value"),
        ]
        for (text, line, reason) in cases {
            let error = error(text)
            #expect(error?.file == "systoled.toml", "\(text)")
            #expect(error?.line == line, "\(text)")
            #expect(error?.reason.hasPrefix(reason) == true, "\(text): \(error?.reason ?? "no error")")
        }
    }

    @Test func theWebServerListensOnLoopbackUnlessToldAndWantsATokenElsewhere() throws {
        var c = DaemonConfiguration(environment: [:])
        #expect(c.http == nil)
        try c.apply("[http]\ntoken = \"abcdefghijklmnop\"", file: "f")
        #expect(c.http == .init(host: "127.0.0.1", port: 8730, token: "abcdefghijklmnop"))
        for (listen, host, port) in [
            ("127.0.0.1:9000", "127.0.0.1", 9000), ("localhost", "127.0.0.1", 8730), ("[::1]:81", "::1", 81),
            ("::1", "::1", 8730), ("127.9.9.9", "127.9.9.9", 8730),
        ] {
            var c = DaemonConfiguration(environment: [:])
            try c.apply("[http]\nlisten = \"\(listen)\"", file: "f")
            #expect(c.http?.host == host && c.http?.port == port && c.http?.isLoopback == true, "\(listen)")
            #expect(c.http?.token == nil)
        }
        // Reachable from other machines: only with a token.
        for listen in ["0.0.0.0:8730", "[::]:8730", "192.168.1.5:80"] {
            #expect(error("[http]\nlisten = \"\(listen)\"")?.reason.contains("needs a token") == true, "\(listen)")
            var c = DaemonConfiguration(environment: [:])
            try c.apply("[http]\nlisten = \"\(listen)\"\ntoken = \"0123456789abcdef\"", file: "f")
            #expect(c.http?.isLoopback == false)
        }
        for (text, reason) in [
            ("listen = \"example.com:80\"", "http.listen must be an IP address and port"),
            ("listen = \"127.0.0.1:0\"", "http.listen's port must be from 1 to 65535"),
            ("listen = \"127.0.0.1:65536\"", "http.listen's port must be from 1 to 65535"),
            ("listen = \"127.0.0.1:x\"", "http.listen must be an IP address and port"),
            ("listen = \"[::1\"", "http.listen must be an IP address and port"),
            ("listen = 80", "listen must be a string"),
            ("token = \"short\"", "http.token must be 16 to 256"),
            ("token = \"\(String(repeating: "a", count: 257))\"", "http.token must be 16 to 256"),
            ("token = \"has space in it 0123\"", "http.token must be 16 to 256"),
            ("token = \"quote\\\"0123456789abcdef\"", "http.token must be 16 to 256"),
            ("port = 80", "unknown setting 'port' in [http]; known: listen, token"),
        ] {
            let error = error("[http]\n" + text)
            #expect(error?.line == 2, "\(text)")
            #expect(error?.reason.hasPrefix(reason) == true, "\(text): \(error?.reason ?? "no error")")
        }
        // privacy at the top level governs every output, as under [live_log].
        var p = DaemonConfiguration(environment: [:])
        try p.apply("privacy = \"duration-only\"", file: "f")
        #expect(p.privacy == .durationOnly)
    }

    @Test func theMQTTTableIsReadWithinItsRanges() throws {
        var c = DaemonConfiguration(environment: [:])
        #expect(c.mqtt == nil)
        try c.apply(
            """
            [mqtt]
            broker = "mqtts://broker.example.org"
            username = "gym"
            password = "p4ss word"
            ca_file = "/etc/ssl/ca.pem"
            client_id = "gym-1"
            topic_prefix = "home/gym"
            discovery_prefix = "ha"
            queue_limit = 50
            """,
            file: "f"
        )
        let mqtt = try #require(c.mqtt)
        #expect(mqtt.host == "broker.example.org" && mqtt.port == 8883 && mqtt.usesTLS)
        #expect(mqtt.username == "gym" && mqtt.password == "p4ss word" && mqtt.caFile == "/etc/ssl/ca.pem")
        #expect(mqtt.clientID == "gym-1" && mqtt.topicPrefix == "home/gym" && mqtt.discoveryPrefix == "ha")
        #expect(mqtt.queueLimit == 50 && mqtt.availabilityTopic == "home/gym/status")
        for (broker, host, port, tls) in [
            ("mqtt://10.0.0.2", "10.0.0.2", 1883, false), ("mqtt://h:1884/", "h", 1884, false),
            ("mqtts://[::1]:8884", "::1", 8884, true), ("mqtt://[fe80::1]", "fe80::1", 1883, false),
        ] {
            var c = DaemonConfiguration(environment: [:])
            try c.apply("[mqtt]\nbroker = \"\(broker)\"", file: "f")
            #expect(c.mqtt?.host == host && c.mqtt?.port == port && c.mqtt?.usesTLS == tls, "\(broker)")
            #expect(c.mqtt?.clientID.hasPrefix("systoled") == true && c.mqtt?.queueLimit == 1000)
        }
        for (text, reason) in [
            ("broker = \"tcp://h\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://user:pw@h\"", "mqtt.broker must not hold credentials"),
            ("broker = \"mqtt://h/path\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://h:0\"", "mqtt.broker's port must be from 1 to 65535"),
            ("broker = \"mqtt://h:99999\"", "mqtt.broker's port must be from 1 to 65535"),
            ("broker = \"mqtt://-h-\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://h\\u001b[31m\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://\(String(repeating: "a.", count: 200))b\"", "mqtt.broker must be an address like"),
            ("broker = \"mqtt://[::1\"", "mqtt.broker must be an address like"),
            ("topic_prefix = \"a/#\"", "mqtt.topic_prefix must be 1 to 64"),
            ("topic_prefix = \"/a\"", "mqtt.topic_prefix must be 1 to 64"),
            ("topic_prefix = \"a//b\"", "mqtt.topic_prefix must be 1 to 64"),
            ("discovery_prefix = \"+\"", "mqtt.discovery_prefix must be 1 to 64"),
            ("client_id = \"a b\"", "mqtt.client_id must be 1 to 64"),
            ("client_id = \"\(String(repeating: "a", count: 65))\"", "mqtt.client_id must be 1 to 64"),
            ("queue_limit = 5", "mqtt.queue_limit is a whole number of messages, from 10 to 100000"),
            ("queue_limit = -1", "mqtt.queue_limit is a whole number of messages, from 10 to 100000"),
            ("queue_limit = \"10\"", "mqtt.queue_limit is a whole number of messages, from 10 to 100000"),
            ("username = \"\"", "mqtt.username must be 1 to 256"),
            ("username = \"a\\nb\"", "mqtt.username must be 1 to 256"),
            ("ca_file = \"relative.pem\"", "ca_file must be an absolute path"),
            ("retain = true", "unknown setting 'retain' in [mqtt]; known: broker"),
        ] {
            let broker = text.hasPrefix("broker") ? "" : "broker = \"mqtt://h\"\n"
            let error = error("[mqtt]\n" + broker + text)
            #expect(error?.line == (broker.isEmpty ? 2 : 3), "\(text)")
            #expect(error?.reason.hasPrefix(reason) == true, "\(text): \(error?.reason ?? "no error")")
        }
        // What the table lacks or contradicts, found once it is read whole.
        for (text, reason) in [
            ("username = \"u\"", "[mqtt]: broker is missing"),
            ("broker = \"mqtt://h\"\npassword = \"p\"", "[mqtt]: a password needs a username"),
            ("broker = \"mqtt://h\"\nca_file = \"/ca.pem\"", "[mqtt]: ca_file is for TLS"),
        ] {
            #expect(error("[mqtt]\n" + text)?.reason.hasPrefix(reason) == true, "\(text)")
        }
    }

    @Test func athletesMapSensorsToNamesWithinLimits() throws {
        let c = try configuration(
            """
            [athletes]
            "a0:9e:1a:94:8d:23" = "Ana"
            "A0:9E:1A:00:00:02" = "Ben Lima"
            "A0:9E:1A:00:00:03" = "Ana"
            "A0:9E:1A:00:00:04" = "Zoë O'Neil-Ávila"
            """
        )
        #expect(c.athletes.athlete(wearing: "A0:9E:1A:94:8D:23") == "Ana", "addresses are compared in one case")
        #expect(c.athletes.athlete(wearing: "A0:9E:1A:00:00:02") == "Ben Lima")
        #expect(c.athletes.athlete(wearing: "A0:9E:1A:00:00:09") == nil)
        #expect(c.athletes.names == ["Ana", "Ben Lima", "Zoë O'Neil-Ávila"], "one athlete may wear two sensors")
        #expect(try configuration("").athletes.isEmpty)

        let long = String(repeating: "a", count: 65)
        for (text, expected) in [
            ("\"not-an-address\" = \"Ana\"", "is not a sensor address"),
            ("\"A0:9E:1A:94:8D:23\" = 3", "must be a name in quotes"),
            ("\"A0:9E:1A:94:8D:23\" = \"\"", "must be 1 to 64"),
            ("\"A0:9E:1A:94:8D:23\" = \"\(long)\"", "must be 1 to 64"),
            ("\"A0:9E:1A:94:8D:23\" = \" Ana\"", "no space first or last"),
            ("\"A0:9E:1A:94:8D:23\" = \"Ana\\u001b[31m\"", "must be 1 to 64"),
            ("\"A0:9E:1A:94:8D:23\" = \"<img src=x>\"", "must be 1 to 64"),
            ("\"A0:9E:1A:94:8D:23\" = \"Ana \\\"B\\\"\"", "must be 1 to 64"),
            ("\"A0:9E:1A:94:8D:23\" = \"Ana\"\n\"a0:9e:1a:94:8d:23\" = \"Ben\"", "named twice"),
        ] {
            let error = self.error("[athletes]\n" + text)
            #expect(error?.reason.contains(expected) == true, "\(text): \(String(describing: error))")
            #expect(error?.line ?? 0 >= 2, "\(text)")
        }
        let many = (0...DaemonConfiguration.maximumSensors).map {
            String(format: "\"A0:9E:1A:00:%02X:%02X\" = \"A\"", $0 / 256, $0 % 256)
        }
        #expect(error("[athletes]\n" + many.joined(separator: "\n"))?.reason.contains("more than 256") == true)
    }

    @Test func ecgIsOffUnlessEnabledAndMayBeSetPerSensorWithTheAccelerometerBeside() throws {
        let defaults = try configuration("")
        #expect(defaults.ecg.defaultOptions == nil && defaults.ecg.optionsBySensor.isEmpty && !defaults.ecg.isUsed)
        let strap = try BluetoothAddress("A0:9E:1A:94:8D:23")
        let other = try BluetoothAddress("A0:9E:1A:00:00:02")
        let c = try configuration(
            """
            [ecg]
            enabled = true
            acceleration_hz = 100
            acceleration_range_g = 4
            "a0:9e:1a:00:00:02" = false
            """
        )
        #expect(c.ecg.defaultOptions == PMDOptions(ecg: true, accelerometer: .init(rate: 100, range: 4)))
        #expect(c.ecg.optionsBySensor == [other: PMDOptions(ecg: false, accelerometer: nil)])
        #expect(c.ecg.optionsBySensor[other]?.isEnabled == false)
        let one = try configuration("[ecg]\n\"A0:9E:1A:94:8D:23\" = true")
        #expect(one.ecg.defaultOptions == nil)
        #expect(one.ecg.optionsBySensor == [strap: PMDOptions(ecg: true, accelerometer: nil)])
        #expect(one.ecg.isUsed)
        // ECG and acceleration are sample types a workout collects unless the list leaves them out.
        #expect(defaults.sampleTypes.isSuperset(of: [.electrocardiogram, .acceleration]))
        #expect(try configuration("sample_types = [\"electrocardiogram\"]").sampleTypes == [.electrocardiogram])
        let many = (0...DaemonConfiguration.maximumSensors).map {
            String(format: "\"A0:9E:1A:00:%02X:%02X\" = true", $0 / 256, $0 % 256)
        }
        #expect(error("[ecg]\n" + many.joined(separator: "\n"))?.reason.contains("more than 256") == true)
    }

    @Test func notifyIsAcquireUnlessSetAndMaySetEachSensor() throws {
        let defaults = try configuration("")
        #expect(defaults.bluetooth.notify == .acquire && defaults.bluetooth.notifyBySensor.isEmpty)
        let c = try configuration(
            """
            [bluetooth]
            notify = "signal"
            "a0:9e:1a:94:8d:23" = "acquire"
            """
        )
        #expect(c.bluetooth.notify == .signal)
        #expect(c.bluetooth.notifyBySensor == [try BluetoothAddress("A0:9E:1A:94:8D:23"): .acquire])
        for (text, expected) in [
            ("notify = \"fast\"", "notify in [bluetooth] must be \"signal\""),
            ("notify = 1", "not an integer"),
            ("notify = \"Acquire\"", "not 'Acquire'"),
            ("notify = \"acquire\\u001b[2J\"", "not 'acquire\\u{1B}[2J'"),
            ("mode = \"acquire\"", "unknown setting 'mode' in [bluetooth]"),
            ("\"A0:9E:1A:94:8D:23\" = \"both\"", "the notify method of A0:9E:1A:94:8D:23 must be"),
            ("\"A0:9E:1A:94:8D:23\" = \"signal\"\n\"a0:9e:1a:94:8d:23\" = \"acquire\"", "set twice"),
        ] {
            let error = self.error("[bluetooth]\n" + text)
            #expect(error?.reason.contains(expected) == true, "\(text): \(String(describing: error))")
            #expect(error?.line ?? 0 >= 2, "\(text)")
        }
        let many = (0...DaemonConfiguration.maximumSensors).map {
            String(format: "\"A0:9E:1A:00:%02X:%02X\" = \"signal\"", $0 / 256, $0 % 256)
        }
        #expect(error("[bluetooth]\n" + many.joined(separator: "\n"))?.reason.contains("more than 256") == true)
    }

    @Test func theReplicationTableIsReadWithinItsRanges() throws {
        #expect(try configuration("").replication == nil)
        let c = try configuration(
            """
            [replication]
            postgres = "postgresql://systole@db.example.org:6543/central?sslmode=verify-full&sslrootcert=/etc/ca.pem"
            password = "p4ss word"
            receiver = "room-1.gym"
            backlog_limit = 100000
            """
        )
        let replication = try #require(c.replication)
        #expect(replication.host == "db.example.org" && replication.port == 6543 && replication.database == "central")
        #expect(replication.username == "systole" && replication.password == "p4ss word")
        #expect(replication.tls == .verifyFull && replication.caFile == "/etc/ca.pem")
        #expect(replication.receiver == "room-1.gym" && replication.backlogLimit == 100_000)
        let defaults = try #require(
            try configuration("[replication]\npostgres = \"postgresql://coach@10.1.2.3\"").replication
        )
        #expect(defaults.database == "coach" && defaults.tls == .verifyFull && defaults.password == nil)
        #expect(!defaults.receiver.isEmpty && defaults.backlogLimit == 5_000_000)

        for (text, expected) in [
            ("postgres = \"mysql://x@h/d\"", "starts with postgresql://"),
            ("postgres = \"postgresql://h/d\"", "must name the user"),
            ("postgres = \"postgresql://u@h/d?sslmode=maybe\"", "sslmode is disable, require or verify-full"),
            ("postgres = 5", "must be a string"),
            ("receiver = \"room 1\"", "1 to 64 letters"),
            ("receiver = \"\"", "1 to 64 letters"),
            ("backlog_limit = 10", "from 10000 to 50000000"),
            ("backlog_limit = \"many\"", "from 10000 to 50000000"),
            ("password = \"\"", "1 to 1024"),
            ("database = \"x\"", "unknown setting 'database' in [replication]"),
            ("receiver = \"r\"", "postgres is missing"),
        ] {
            let error = self.error("[replication]\n" + text)
            #expect(error?.reason.contains(expected) == true, "\(text): \(String(describing: error))")
            #expect(error?.line == 2, "\(text)")
        }
    }

    @Test func aSecretInAFileEveryoneCanReadIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID()).toml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (text, secret) in [
            ("[mqtt]\nbroker = \"mqtt://h\"\nusername = \"u\"\npassword = \"p\"", "the [mqtt] password"),
            ("[http]\ntoken = \"0123456789abcdef\"", "the [http] token"),
            ("[replication]\npostgres = \"postgresql://s@h/s\"\npassword = \"p\"", "the [replication] password"),
            ("[replication]\npostgres = \"postgresql://s:p@h/s\"", "the [replication] password"),
        ] {
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o644)
            #expect(throws: DaemonConfiguration.Error.self) { try DaemonConfiguration.load(path: path) }
            do {
                _ = try DaemonConfiguration.load(path: path)
            } catch {
                #expect(error.reason.hasPrefix("holds \(secret) and every local user can read it"), "\(error)")
            }
            chmod(path, 0o640)
            #expect(throws: Never.self) { try DaemonConfiguration.load(path: path) }
        }
        // Without a secret the file may be readable by all, as the example is installed where systemd is absent.
        try "[mqtt]\nbroker = \"mqtt://h\"".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        #expect(throws: Never.self) { try DaemonConfiguration.load(path: path) }
    }

    @Test func flagsOverrideTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systoled-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("systoled.toml").path
        try "bus = \"session\"\nstore = \"/a/health.sqlite\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let options = try DaemonOptions.parse([
            "--config", file, "--store", "/b/health.sqlite", "--live-log", "/b/live.log", "--sensor", "any",
        ])
        let c = try options.configuration(environment: environment)
        #expect(c.bus == .session)
        #expect(c.storePath == "/b/health.sqlite")
        #expect(c.liveLogPath == "/b/live.log")
        let bus = try DaemonOptions.parse(["--config", file, "--bus", "system"]).configuration(environment: environment)
        #expect(bus.bus == .system)
    }

    @Test func aMissingFileIsAnErrorOnlyWhenNamed() throws {
        #expect(throws: Never.self) {
            _ = try DaemonConfiguration.load(path: "/nonexistent/systoled.toml", optional: true)
        }
        let error = #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/nonexistent/systoled.toml"]).configuration()
        }
        #expect(error?.description.hasPrefix("/nonexistent/systoled.toml: does not exist") == true)
        let flag = #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/dev/null", "--adapter", "hci"]).configuration()
        }
        #expect(flag?.description.hasPrefix("--adapter: adapter must be a name like \"hci0\"") == true)
    }

    @Test func theExampleFileIsValid() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/systoled.toml.example").path
        let c = try DaemonConfiguration.load(path: example, environment: environment)
        #expect(c.bus == .system)
        #expect(c.sensors == [.any])
    }

    @Test func theNotificationLimitIsReadWithinItsRange() throws {
        #expect(try configuration("notification_limit = 100\n").notificationLimit == 100)
        #expect(try configuration("").notificationLimit == 12)
        for value in ["0", "10001", "-1"] {
            #expect(
                error("notification_limit = \(value)\n")?.reason
                    == "notification_limit is notifications a second per sensor, from 1 to 10000"
            )
        }
    }

    @Test func deeplyNestedArraysAreAnErrorNotACrash() {
        let text = "sensors = " + String(repeating: "[", count: 200_000) + "\n"
        let found = error(text)
        #expect(found?.line == 1)
        #expect(found?.reason == "arrays nest more than 8 deep; no setting uses nested arrays")
    }

    @Test(arguments: ["garbage:nothing", "garbage:path=/x", "unix:", "unix:path", ":", "tcp:host=localhost,port=x,"])
    func aBusAddressLibdbusCannotUseIsAnErrorAtLoad(address: String) {
        let found = error("bus = \"\(address)\"\n")
        #expect(found?.line == 1, "\(address) was accepted")
        #expect(found?.reason.hasPrefix("bus: '\(address)' is not a D-Bus address") == true, "\(found?.reason ?? "")")
    }

    @Test func busAddressesLibdbusUsesAreAccepted() throws {
        for address in ["unix:path=/run/dbus/system_bus_socket", "unix:abstract=/tmp/x", "tcp:host=127.0.0.1,port=5"] {
            #expect(try configuration("bus = \"\(address)\"\n").bus == .address(address))
        }
    }

    @Test func aFolderGivenAsTheFileIsNamedAsSuch() {
        let folder = FileManager.default.temporaryDirectory.path
        #expect(
            throws: DaemonConfiguration.Error(
                file: folder,
                line: 0,
                reason: "is a folder, not a file; name the file, like /etc/systole/systoled.toml"
            )
        ) {
            _ = try DaemonConfiguration.load(path: folder)
        }
    }

    @Test func echoedValuesAreCutAndEscaped() {
        let long = String(repeating: "x", count: 1 << 20)
        for text in [
            "adapter = \"\(long)\"\n", "bus = \"\(long)\"\n", "sensors = [\"\(long)\"]\n", "store = \"\(long)\"\n",
            "store = \"/\(long)\"\n", "\(long) = 1\n", "x = \(long)\n", "adapter = \"\\u001b]0;owned\\u0007\"\n",
        ] {
            let found = error(text)
            #expect(found != nil)
            #expect((found?.reason.utf8.count ?? 0) < 400, "\(found?.reason.prefix(100) ?? "")")
            #expect(found?.reason.unicodeScalars.contains { $0.value < 0x20 } == false)
        }
    }

    @Test func pathsSensorsAndSizesHaveLimits() {
        #expect(
            error("store = \"/\(String(repeating: "a", count: 5000))\"\n")?.reason
                == "store is longer than 4096 bytes, the longest path Linux opens"
        )
        let many = (0..<300).map { _ in "\"any\"" }.joined(separator: ", ")
        #expect(error("sensors = [\(many)]\n")?.reason == "sensors lists 300 entries; at most 256 are kept connected")
        #expect(
            error("sensors = [\"A0:9E:1A:12:34:56\", \"a0:9e:1a:12:34:56\"]\n")?.reason
                == "A0:9E:1A:12:34:56 is listed twice in sensors; list each sensor once"
        )
        #expect(
            error("[live_log]\nmax_size = 9223372036854775807\n")?.reason
                == "live_log.max_size is in bytes and must be from 4096 to 1073741824 (1 GiB)"
        )
    }

    @Test func aFileLargerThanAConfigurationIsRefusedBeforeItIsRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID()).toml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: UInt8(ascii: "#"), count: 1 << 20).write(to: URL(fileURLWithPath: path))
        #expect(
            throws: DaemonConfiguration.Error(
                file: path,
                line: 0,
                reason: "is 1048576 bytes; a configuration is at most 65536 bytes"
            )
        ) {
            _ = try DaemonConfiguration.load(path: path)
        }
    }

    @Test func flagsAreCheckedLikeTheFile() {
        #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/dev/null", "--bus", "garbage:nothing"]).configuration()
        }
        #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/dev/null", "--store", "relative.sqlite"]).configuration()
        }
        #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse([
                "--config", "/dev/null", "--live-log", "/" + String(repeating: "a", count: 5000),
            ]).configuration()
        }
    }
}
