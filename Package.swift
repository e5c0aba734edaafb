// swift-tools-version:6.1
import PackageDescription

/// Every Strata target is compiled in Swift 6 language mode with complete
/// strict concurrency checking; warnings are not tolerated in CI.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataModel", targets: ["StrataModel"]),
        .library(name: "StrataQuery", targets: ["StrataQuery"]),
        .library(name: "StrataStore", targets: ["StrataStore"]),
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
        .library(name: "StrataContext", targets: ["StrataContext"]),
        .library(name: "StrataWire", targets: ["StrataWire"]),
        .library(name: "StrataAuth", targets: ["StrataAuth"]),
        .library(name: "StrataServer", targets: ["StrataServer"]),
        .library(name: "StrataClient", targets: ["StrataClient"]),
        .library(name: "StrataText", targets: ["StrataText"]),
        .library(name: "StrataFuzzing", targets: ["StrataFuzzing"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-server", targets: ["strata-server"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "4.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    ],
    targets: [
        // Layer 1: the object model, its Xcode importer and structural validation.
        .target(
            name: "StrataModel",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 2: the predicate language: parser, type checker, in-memory
        // evaluator, and the compiler to SQL with bound values (no driver).
        .target(
            name: "StrataQuery",
            dependencies: [
                "StrataModel",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 3: persistent stores, each an actor. The core: the
        // PersistentStore protocol, snapshots, changes, history values, the
        // store factory, and the stores that need no database (in-memory,
        // binary). Links no SQL driver.
        .target(
            name: "StrataStore",
            dependencies: [
                "CStrataZlib",
                "StrataModel",
                "StrataQuery",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // A SQLite VFS that gathers a commit's writes to the write-ahead
        // log into one system call (C: SQLite's VFS is a C interface).
        .target(
            name: "CStrataSQLite",
            path: "Sources/CStrataSQLite",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        // Layer 3: the SQLite store (WAL, group commit, history), its SQL
        // functions and value coding through GRDB, and offline restore.
        .target(
            name: "StrataSQLite",
            dependencies: [
                "CStrataSQLite",
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 3: the PostgreSQL store through postgres-nio: its schema,
        // dialect and value coding (a module of its own, so that programs
        // without it do not build postgres-nio).
        .target(
            name: "StrataPostgres",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 4: the coordinator, contexts and the container.
        .target(
            name: "StrataContext",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The bundled Books & Feedback sample (tests, the server's default).
        .target(
            name: "StrataSamples",
            dependencies: ["StrataModel", "StrataStore", "StrataContext"],
            swiftSettings: strictSettings
        ),
        // The system libedit, for the shell's line editing (strata shell).
        .systemLibrary(
            name: "CStrataEdit",
            path: "Sources/CStrataEdit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        // The system zlib, for compressed frames.
        .systemLibrary(
            name: "CStrataZlib",
            path: "Sources/CStrataZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Layer 5: the wire protocol: generated messages (Protocol/strata.proto),
        // framing, compression, value and status mapping.
        .target(
            name: "StrataWire",
            dependencies: [
                "StrataModel",
                "CStrataZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSettings
        ),
        // Identities: who a hello's token or client certificate names
        // (auth files of token digests, signed JWTs, certificate subjects).
        .target(
            name: "StrataAuth",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 6: the server: connections, sessions, subscriptions, stats.
        .target(
            name: "StrataServer",
            dependencies: [
                "StrataAuth",
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataSQLite",
                "StrataContext",
                "StrataWire",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 7: the Swift client library.
        .target(
            name: "StrataClient",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataContext",
                "StrataWire",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Values from typed text (the CLI's key=value, ISO-8601 dates).
        .target(
            name: "StrataText",
            dependencies: ["StrataModel", "StrataWire"],
            swiftSettings: strictSettings
        ),
        // Entry points of the fuzz targets (`Fuzz/`, built apart with
        // libFuzzer) and of the corpus replay tests.
        .target(
            name: "StrataFuzzing",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataSQLite",
                "StrataContext",
                "StrataSamples",
                "StrataWire",
                "StrataServer",
                "StrataText",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "strata-server",
            dependencies: [
                "StrataAuth",
                "StrataModel",
                "StrataStore",
                "StrataSQLite",
                "StrataPostgres",
                "StrataContext",
                "StrataSamples",
                "StrataServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataAuth",
                "StrataModel",
                "StrataQuery",
                "StrataWire",
                "StrataClient",
                "StrataText",
                "CStrataEdit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/strata",
            swiftSettings: strictSettings
        ),
        // The load tester (ghz / wrk / redis-benchmark conventions).
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "StrataModel",
                "StrataWire",
                "StrataClient",
                "StrataText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Tools/strata-bench",
            swiftSettings: strictSettings
        ),
        // Writers and checker of Tools/crash-test.sh (kill -9 durability).
        .executableTarget(
            name: "strata-crash",
            dependencies: [
                "StrataModel",
                "StrataWire",
                "StrataClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tools/strata-crash",
            swiftSettings: strictSettings
        ),
        // Side-by-side figures for the embedded stack (run in release).
        .executableTarget(
            name: "strata-embedded-bench",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataSQLite",
                "StrataContext",
                "StrataSamples",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Tools/strata-embedded-bench",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataModelTests",
            dependencies: ["StrataModel", "StrataQuery"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataQueryTests",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataSQLite",
                "StrataPostgres",
                "StrataPostgresTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataStoreTests",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataSQLite",
                "StrataPostgres",
                "StrataPostgresTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataWireTests",
            dependencies: [
                "StrataModel",
                "StrataWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataServerTests",
            dependencies: [
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "StrataAuth",
                "StrataTestCertificates",
                .product(name: "JWTKit", package: "jwt-kit"),
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataSQLite",
                "StrataContext",
                "StrataSamples",
                "StrataWire",
                "StrataServer",
                "StrataClient",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Runs the built executables (strata, strata-server, strata-bench)
        // against live servers on 127.0.0.1.
        .testTarget(
            name: "StrataToolTests",
            dependencies: [
                "StrataAuth",
                "StrataPostgresTesting",
                "StrataTestCertificates",
                "StrataModel",
                "StrataWire",
                "StrataClient",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataContextTests",
            dependencies: [
                "StrataModel", "StrataQuery", "StrataStore", "StrataSQLite", "StrataContext", "StrataSamples",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
                "StrataPostgres",
                "StrataPostgresTesting",
                "StrataTestCertificates",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The PostgreSQL server of the PostgreSQL suites (STRATA_POSTGRES_URL).
        .target(
            name: "StrataPostgresTesting",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataPostgres",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/StrataPostgresTesting",
            swiftSettings: strictSettings
        ),
        // Certificates made at test time for the TLS tests (no committed keys).
        .target(
            name: "StrataTestCertificates",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/StrataTestCertificates",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataAuthTests",
            dependencies: [
                "StrataAuth",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Replays every file of `Fuzz/Corpus/<target>/` (seeds and every
        // input that ever crashed) through the fuzz targets' entry points.
        .testTarget(
            name: "StrataFuzzTests",
            dependencies: ["StrataFuzzing"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
