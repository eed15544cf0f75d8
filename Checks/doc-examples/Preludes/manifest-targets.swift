// swift-tools-version: 6.2
// A target of a package's manifest (Docs/WritingAStore.md), in the manifest of a store's package.
import PackageDescription

let package = Package(
    name: "MyStore",
    dependencies: [.package(path: "../StorableConfig")],
    targets: [
        // example
        .target(name: "MyStore", dependencies: [.product(name: "StorableConfig", package: "StorableConfig")])
    ]
)
