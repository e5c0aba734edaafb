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
        .library(name: "StrataContext", targets: ["StrataContext"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // Layer 1: the object model, its Xcode importer and structural validation.
        .target(
            name: "StrataModel",
            swiftSettings: strictSettings
        ),
        // Layer 2: the predicate language: parser, type checker, in-memory
        // evaluator and the SQLite compiler.
        .target(
            name: "StrataQuery",
            dependencies: [
                "StrataModel",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 3: persistent stores, each an actor: SQLite, in-memory, binary.
        .target(
            name: "StrataStore",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        // Layer 4: the coordinator, contexts and the container.
        .target(
            name: "StrataContext",
            dependencies: ["StrataModel", "StrataQuery", "StrataStore"],
            swiftSettings: strictSettings
        ),
        // The bundled Books & Feedback sample (tests, the server's default).
        .target(
            name: "StrataSamples",
            dependencies: ["StrataModel", "StrataStore", "StrataContext"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/strata",
            swiftSettings: strictSettings
        ),
        // Side-by-side figures for the embedded stack (run in release).
        .executableTarget(
            name: "strata-embedded-bench",
            dependencies: [
                "StrataModel",
                "StrataQuery",
                "StrataStore",
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
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataContextTests",
            dependencies: ["StrataModel", "StrataQuery", "StrataStore", "StrataContext", "StrataSamples"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
