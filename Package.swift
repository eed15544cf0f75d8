// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "StorableConfig",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorableConfig", targets: ["StorableConfig"]),
        .executable(name: "storable-config-demo", targets: ["storable-config-demo"]),
        .executable(name: "storable-config-stress", targets: ["storable-config-stress"]),
    ],
    targets: [
        .target(name: "StorableConfig"),
        .executableTarget(name: "storable-config-demo", dependencies: ["StorableConfig"]),
        // Crash and multi-process drivers for JSONFileStore; the tests start it as a child process.
        .executableTarget(name: "storable-config-stress", dependencies: ["StorableConfig"]),
        .testTarget(
            name: "StorableConfigTests",
            dependencies: ["StorableConfig", "storable-config-demo", "storable-config-stress"]
        ),
        // Built with the isolation that new Xcode app targets use, to prove that a
        // config subclass declared in such a module compiles and works.
        .testTarget(
            name: "MainActorIsolationTests",
            dependencies: ["StorableConfig"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
