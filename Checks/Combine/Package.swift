// swift-tools-version: 6.2
// The library's Combine support, compiled on Linux against OpenCombine 0.14.0 and tested. A package of its own,
// as Benchmarks/ is, so that the library's manifest keeps zero dependencies; the library compiles the same
// files, the module StorableConfigCombine, with Apple's Combine where it exists. Here they are a module of another
// name, OpenCombineStorableConfig (Sources/OpenCombineStorableConfig links to them), since a package graph has
// one target of a name:
//
//   swift test --package-path Checks/Combine
import Foundation
import PackageDescription

/// The library's package identity is the name of its checkout's folder ("main", "StorableConfig", a worktree's
/// name), which the product reference below must spell.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "StorableConfigCombineCheck",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        // A symbolic link to Sources/StorableConfigCombine: the library's own files, not a copy.
        .target(
            name: "OpenCombineStorableConfig",
            dependencies: [
                .product(name: "StorableConfig", package: library),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.define("STORABLE_CONFIG_OPENCOMBINE")]
        ),
        .testTarget(
            name: "StorableConfigCombineTests",
            dependencies: [
                "OpenCombineStorableConfig",
                .product(name: "StorableConfig", package: library),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
