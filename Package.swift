// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "StorableConfig",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorableConfig", targets: ["StorableConfig"]),
        // A conformance suite for people who write stores: one call checks a store against ConfigStore's
        // documented guarantees.
        .library(name: "StorableConfigTesting", targets: ["StorableConfigTesting"]),
        // EtcdStore: one config class shared by a fleet of servers through an etcd cluster.
        .library(name: "StorableConfigEtcd", targets: ["StorableConfigEtcd"]),
        // CloudSync: chosen settings synced across a user's devices through iCloud's key-value store.
        .library(name: "StorableConfigCloud", targets: ["StorableConfigCloud"]),
        // The settings' descriptions for tools: a JSON Schema of the settings file, the AppConfig specification file.
        .library(name: "StorableConfigSchema", targets: ["StorableConfigSchema"]),
        // Secret settings kept apart from the others: SecretRoutingStore wraps a store and sends the secret keys to a
        // SecretStore (the Keychain, a private directory of files, memory).
        .library(name: "StorableConfigSecrets", targets: ["StorableConfigSecrets"]),
        // Combine publishers of settings and configs as ObservableObject, where Combine exists (empty on Linux).
        .library(name: "StorableConfigCombine", targets: ["StorableConfigCombine"]),
        .executable(name: "storable-config-demo", targets: ["storable-config-demo"]),
        .executable(name: "storable-config-stress", targets: ["storable-config-stress"]),
        .executable(name: "storable-config-benchmarks", targets: ["storable-config-benchmarks"]),
    ],
    targets: [
        .target(name: "StorableConfig"),
        .target(name: "StorableConfigSecrets", dependencies: ["StorableConfig"]),
        .target(name: "StorableConfigTesting", dependencies: ["StorableConfig", "StorableConfigSecrets"]),
        .target(name: "StorableConfigEtcd", dependencies: ["StorableConfig"]),
        .target(name: "StorableConfigCloud", dependencies: ["StorableConfig"]),
        .target(name: "StorableConfigSchema", dependencies: ["StorableConfig"]),
        .target(name: "StorableConfigCombine", dependencies: ["StorableConfig"]),
        .executableTarget(
            name: "storable-config-demo",
            dependencies: [
                "StorableConfig", "StorableConfigSecrets", "StorableConfigEtcd", "StorableConfigCloud",
                "StorableConfigSchema",
            ]),
        // Crash and multi-process drivers for JSONFileStore; the tests start it as a child process.
        .executableTarget(name: "storable-config-stress", dependencies: ["StorableConfig", "StorableConfigSecrets"]),
        // Figures against a plain property and hand-written UserDefaults code: swift run -c release ...
        .executableTarget(
            name: "storable-config-benchmarks",
            dependencies: ["StorableConfig", "StorableConfigEtcd", "StorableConfigCloud", "CAllocationStatistics"],
            // The generator of GeneratedConfigs.swift, beside it.
            exclude: ["generate-configs.sh"]),
        // malloc's statistics, which Swift's Glibc module does not export, for the benchmarks' memory figure.
        .target(name: "CAllocationStatistics"),
        // Two versions of one program, for the tests of values that survive a change of their type.
        .executableTarget(
            name: "window-v1", dependencies: ["StorableConfig", "StorableConfigEtcd"], path: "Tests/Programs/window-v1"),
        .executableTarget(
            name: "window-v2", dependencies: ["StorableConfig", "StorableConfigEtcd"], path: "Tests/Programs/window-v2"),
        .testTarget(
            name: "StorableConfigTests",
            dependencies: [
                "StorableConfig", "StorableConfigSecrets", "StorableConfigTesting", "StorableConfigSchema",
                "StorableConfigEtcd", "storable-config-demo",
                "storable-config-stress",
                "window-v1",
                "window-v2",
            ],
            // Files that earlier versions wrote, read by the tests from their place in the source tree.
            exclude: ["Fixtures"]
        ),
        // Against a real etcd started by the tests (Debian's etcd-server); skipped, saying how to install it,
        // when the binary is missing.
        .testTarget(
            name: "StorableConfigEtcdTests",
            dependencies: [
                "StorableConfig", "StorableConfigEtcd", "StorableConfigTesting", "storable-config-demo", "window-v1",
                "window-v2",
            ]
        ),
        // The merge engine against a simulated cloud of several devices.
        .testTarget(
            name: "StorableConfigCloudTests",
            dependencies: ["StorableConfig", "StorableConfigCloud"]
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
