// swift-tools-version: 6.1
// systole — records workouts from Bluetooth LE heart-rate sensors through BlueZ.
// Layers (each imports only those below it; folder = module): see docs/architecture.md.
import PackageDescription

let package = Package(
    name: "systole",
    products: [
        .executable(name: "systole", targets: ["systole"]),
        .library(name: "HeartRateProfile", targets: ["HeartRateProfile"]),
        .library(name: "PolarMeasurementData", targets: ["PolarMeasurementData"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "BlueZSimulator", targets: ["BlueZSimulator"]),
        .library(name: "WorkoutKit", targets: ["WorkoutKit"]),
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "WorkoutAnalysis", targets: ["WorkoutAnalysis"]),
        .library(name: "WorkoutExport", targets: ["WorkoutExport"]),
        .executable(name: "systole-sim", targets: ["systole-sim"]),
        .executable(name: "systoled", targets: ["systoled"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // MARK: C system libraries (pkg-config), with header-only shims for what Swift cannot import.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),

        // MARK: Pure Swift GATT codecs for the Heart Rate and Battery services. No I/O, no Foundation.
        .target(name: "HeartRateProfile"),

        // MARK: Polar's Measurement Data service (PMD: ECG and acceleration from an H10): commands, answers, frames.
        // No I/O, no Foundation.
        .target(name: "PolarMeasurementData"),

        // MARK: Text someone else chose, made safe to show: quoted excerpts, cleaned names, export text. A leaf.
        .target(name: "SafeText"),

        // MARK: Swift D-Bus binding over CDBus: its own loop thread, typed values, calls, signals, exported objects.
        .target(name: "DBus", dependencies: ["CDBus", "SafeText"]),

        // MARK: Typed org.bluez client: adapters, devices, GATT characteristics and their notifications, the agent.
        .target(
            name: "BlueZ",
            dependencies: ["CBluetooth", "DBus", "HeartRateProfile", "SafeText"]
        ),

        // MARK: A heart-rate sensor kept connected through BlueZ, its readings checked, decoded and back-dated.
        .target(
            name: "HeartRateSensors",
            dependencies: ["BlueZ", "DBus", "HeartRateProfile", "PolarMeasurementData", "SafeText"]
        ),

        // MARK: The HealthKit-style workout engine: session state machine, live builder, data source, statistics.
        .target(name: "WorkoutKit"),

        // MARK: The SQLite store: WorkoutKit's HealthStore protocol on one SQLite file (GRDB).
        .target(
            name: "SQLiteStore",
            dependencies: ["WorkoutKit", .product(name: "GRDB", package: "GRDB.swift")]
        ),

        // MARK: A BlueZ simulator: plays bluetoothd's org.bluez API with simulated sensors, for tests and the demo.
        .target(
            name: "BlueZSimulator",
            dependencies: ["DBus", "HeartRateProfile", "PolarMeasurementData", "SafeText"]
        ),
        .executableTarget(
            name: "systole-sim",
            dependencies: [
                "BlueZSimulator", "DBus", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: A workout's recording and what it tells: HRV with artifact correction, zones, training load, energy.
        .target(name: "WorkoutAnalysis", dependencies: ["WorkoutKit"]),
        // MARK: The FIT protocol (Garmin's FIT SDK): records, base types, CRC. No profile, no I/O.
        .target(name: "FITFormat"),
        // MARK: Workouts out of systole: the file formats (FIT, TCX, CSV, RR) of a recording. No I/O.
        .target(name: "WorkoutExport", dependencies: ["FITFormat", "SafeText", "WorkoutAnalysis", "WorkoutKit"]),
        // MARK: Workouts into systole: activities read from FIT and TCX files, every value checked. No I/O.
        .target(name: "WorkoutImport", dependencies: ["FITFormat", "SafeText", "WorkoutKit"]),

        // MARK: What the live outputs show (the page, the overlay, MQTT): plain values, privacy applied by systoled.
        .target(name: "LiveFeed"),
        // MARK: systoled's web server (Hummingbird): the live page, the overlay, workouts, /metrics.
        .target(
            name: "LiveWeb",
            dependencies: [
                "LiveFeed",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: MQTT over libmosquitto: the live values and Home Assistant discovery, behind a bounded queue.
        .target(
            name: "MQTTBridge",
            dependencies: [
                "CMosquitto", "LiveFeed", "SafeText",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Replication to PostgreSQL (postgres-nio): the central schema, the replicator, and reading the whole.
        .target(
            name: "Replication",
            dependencies: [
                "SQLiteStore", "WorkoutKit", "WorkoutAnalysis",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: What crosses D-Bus between systoled and `systole`: the API's names and errors, a workout as its
        // values (with analysis), the export formats, the elapsed-time format.
        .target(
            name: "ControlAPI",
            dependencies: ["DBus", "SafeText", "WorkoutKit", "WorkoutAnalysis", "WorkoutExport", "WorkoutImport"]
        ),

        // MARK: The recording path: sensors → hand-off → workout (stored) → live log and outputs, as named stages.
        .target(
            name: "Recording",
            dependencies: [
                // ControlAPI for the one elapsed-time format the live log shares with the CLI.
                "BlueZ", "HeartRateSensors", "ControlAPI", "DBus", "HeartRateProfile", "WorkoutKit", "SQLiteStore",
                "WorkoutAnalysis", "PolarMeasurementData",
                "SafeText",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: systoled's configuration: the TOML file and the flags over it, every value checked with its line.
        .target(
            name: "SystoledConfiguration",
            dependencies: [
                "BlueZ", "HeartRateSensors", "DBus", "LiveWeb", "MQTTBridge", "Recording", "Replication", "SafeText",
                "WorkoutAnalysis",
                "WorkoutKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: The daemon: services in one ServiceGroup, the D-Bus control API, process wiring.
        .target(
            name: "Daemon",
            dependencies: [
                "Recording", "SystoledConfiguration", "BlueZ", "HeartRateSensors", "ControlAPI", "DBus",
                "HeartRateProfile", "WorkoutKit",
                "SQLiteStore",
                "WorkoutAnalysis", "WorkoutImport",
                "WorkoutExport", "PolarMeasurementData", "LiveFeed", "LiveWeb", "MQTTBridge", "Replication", "CMalloc",
                "SafeText",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // glibc's <malloc.h>, which the Glibc module leaves out (systoled's single malloc arena).
        .systemLibrary(name: "CMalloc"),
        .executableTarget(name: "systoled", dependencies: ["Daemon"]),

        // MARK: The `systole` command line: commands live in a library so tests drive them too.
        .target(
            name: "SystoleCLI",
            dependencies: [
                "HeartRateProfile", "PolarMeasurementData",
                "BlueZ", "HeartRateSensors",
                "ControlAPI",
                "DBus",
                "Replication",
                "SafeText",
                "WorkoutAnalysis", "WorkoutImport",
                "WorkoutKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Also systoled when called by that name (the Debian package ships one binary for both).
        .executableTarget(name: "systole", dependencies: ["SystoleCLI", "Daemon", "MQTTBridge"]),

        // MARK: Benchmarks (driven by scripts in Benchmarks/)
        .executableTarget(
            name: "systole-sensor-ingest",
            dependencies: ["BlueZ", "HeartRateSensors", "CDBus"],
            path: "Benchmarks/SensorIngest"
        ),

        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "SQLiteStore", "WorkoutKit", .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        .executableTarget(
            name: "ExportBenchmarks",
            dependencies: [
                "SQLiteStore", "WorkoutAnalysis", "WorkoutExport", "WorkoutKit",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ExportBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        // MARK: Tests
        .target(
            name: "SystoleTestSupport",
            dependencies: ["BlueZ", "BlueZSimulator", "ControlAPI", "DBus", "HeartRateProfile", "WorkoutKit"],
            path: "Tests/SystoleTestSupport",
            // The independent FIT encoder's script runs from the source tree, with the venv's Python.
            exclude: ["write_fit.py"]
        ),
        .testTarget(
            name: "HeartRateProfileTests",
            dependencies: [
                "HeartRateProfile",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // The published payload vectors; scripts/fuzz-decoder.sh seeds its corpus from the same file.
            resources: [.copy("Resources/hrm-vectors.json")]
        ),
        .testTarget(
            name: "PolarMeasurementDataTests",
            dependencies: [
                "PolarMeasurementData",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // Polar's published frames; scripts/fuzz-decoder.sh seeds its PMD corpus from the same file.
            resources: [.copy("Resources/pmd-vectors.json")]
        ),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "BlueZSimulator", "SystoleTestSupport"]),
        .testTarget(
            name: "HeartRateSensorsTests",
            dependencies: [
                "HeartRateSensors", "BlueZ", "BlueZSimulator", "DBus", "HeartRateProfile", "SystoleTestSupport",
            ]
        ),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["BlueZSimulator", "DBus", "SystoleTestSupport"]),
        .testTarget(name: "CDBusTests", dependencies: ["CDBus"]),
        .testTarget(name: "MQTTBridgeTests", dependencies: ["MQTTBridge", "LiveFeed"]),
        .testTarget(name: "LiveFeedTests", dependencies: ["LiveFeed", "SystoleTestSupport"]),
        .testTarget(
            name: "ReplicationTests",
            dependencies: [
                "Replication", "SQLiteStore", "WorkoutKit", "SystoleTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "WorkoutKitTests", dependencies: ["WorkoutKit", "SystoleTestSupport"]),
        .testTarget(
            name: "WorkoutExportTests",
            dependencies: ["FITFormat", "WorkoutExport", "WorkoutAnalysis", "WorkoutKit", "SystoleTestSupport"],
            // The checkers' scripts run from the source tree (they need the venv's Python, not a bundle).
            exclude: ["decode_fit.py", "check_tcx.py", "check_csv.py", "check_rr.py", "read_edf.py"]
        ),
        .testTarget(
            name: "WorkoutImportTests",
            dependencies: ["WorkoutImport", "FITFormat", "WorkoutExport", "WorkoutKit", "SystoleTestSupport"]
        ),
        .testTarget(
            name: "WorkoutAnalysisTests",
            // The simulator's sensors play ectopic and missed beats for the HRV to find.
            dependencies: [
                "WorkoutAnalysis", "WorkoutKit", "BlueZSimulator", "HeartRateProfile", "SystoleTestSupport",
            ],
            // The reference's scripts run from the source tree with the venv's Python.
            exclude: ["Python"]
        ),
        .testTarget(
            name: "RecordingTests",
            dependencies: [
                "Recording", "BlueZ", "HeartRateSensors", "DBus", "HeartRateProfile", "SQLiteStore", "WorkoutKit",
                "WorkoutAnalysis",
                "SystoleTestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "Daemon", "BlueZ", "ControlAPI", "DBus", "HeartRateProfile", "WorkoutKit", "WorkoutAnalysis",
                "WorkoutImport", "SQLiteStore", "SystoleTestSupport",
            ]
        ),
        .testTarget(
            name: "SystoledConfigurationTests",
            dependencies: [
                "SystoledConfiguration", "BlueZ", "HeartRateSensors", "Recording", "WorkoutAnalysis", "WorkoutKit",
            ]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: [
                "SQLiteStore", "WorkoutKit", "SystoleTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                // To look at the file's tables where the public API cannot tell (series chunks).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // A child process the crash-recovery test kills with SIGKILL.
        .executableTarget(
            name: "store-probe",
            dependencies: ["SQLiteStore", "WorkoutKit"],
            path: "Tests/StoreProbe"
        ),
        // Listens for systoled's signals as any local user could; the policy test runs it as several users.
        .executableTarget(name: "bus-listen-probe", dependencies: ["DBus"], path: "Tests/BusListenProbe"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "SystoleTestSupport"]),
        .testTarget(name: "SafeTextTests", dependencies: ["SafeText"]),
        .testTarget(name: "SystoleCLITests", dependencies: ["SystoleCLI", "DBus", "SystoleTestSupport"]),
        // The real systoled, systole and systole-sim as processes, with the real servers they talk to.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "ControlAPI", "DBus", "HeartRateProfile", "SQLiteStore", "WorkoutKit", "SystoleTestSupport",
            ],
            // The web, MQTT and trends tests' scripts run from the source tree with the venv's Python.
            exclude: ["Web", "MQTT", "pmc_reference.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
