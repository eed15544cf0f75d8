// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "StorableConfig",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorableConfig", targets: ["StorableConfig"]),
        .executable(name: "storable-config-demo", targets: ["storable-config-demo"]),
    ],
    targets: [
        .target(name: "StorableConfig"),
        .executableTarget(name: "storable-config-demo", dependencies: ["StorableConfig"]),
        .testTarget(name: "StorableConfigTests", dependencies: ["StorableConfig"]),
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
