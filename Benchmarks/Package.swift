// swift-tools-version: 6.2
// StorableConfig against apple/swift-configuration 1.4.0, side by side in one process. A package of its own,
// as swift-configuration keeps its benchmarks, so that the library's manifest keeps zero dependencies:
//
//   cd Benchmarks && swift run -c release storable-config-vs-swift-configuration
import Foundation
import PackageDescription

/// The library's package identity is the name of its checkout's folder ("main", "StorableConfig", a worktree's
/// name), which the product reference below must spell.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "StorableConfigBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-configuration", exact: "1.4.0"),
    ],
    targets: [
        .executableTarget(
            name: "storable-config-vs-swift-configuration",
            dependencies: [
                .product(name: "StorableConfig", package: library),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
