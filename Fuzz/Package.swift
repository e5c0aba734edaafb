// swift-tools-version:6.1
import Foundation
import PackageDescription

/// libFuzzer drivers for Strata's decoders of outside input, one
/// executable per target of `StrataFuzzing.FuzzTarget`. Built apart from
/// the main package (with `-sanitize=fuzzer,address`, see
/// `Tools/fuzz.sh`) so that the normal build never pays for them.
/// SwiftPM names a path dependency after its folder: the clone's name.
let mainPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let targets = ["frame", "request", "predicate", "model", "binary-store", "value"]

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: "fuzz-\($0)", targets: ["fuzz-\($0)"]) },
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // The entry points every driver shares.
        .target(
            name: "FuzzMain",
            dependencies: [.product(name: "StrataFuzzing", package: mainPackage)]
        ),
    ] + targets.map { name in
        .executableTarget(
            name: "fuzz-\(name)",
            dependencies: ["FuzzMain", .product(name: "StrataFuzzing", package: mainPackage)],
            path: "Sources/fuzz-\(name)",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    },
    swiftLanguageModes: [.v6]
)
