import Foundation
import StorableConfig
import StorableConfigTesting
import Testing

/// The recipe of Docs/Migrations.md: an app's test that catches a rename before it ships.
struct ShippedKeysTests {
    static let listURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ShippedKeys/shipped-keys.txt")

    @Test func everyShippedKeyIsStillRead() throws {
        let shipped = try ShippedKeys(contentsOf: Self.listURL)
        #expect(shipped.keys.count == 4)
        try shipped.check([ShippedAppConfig(store: InMemoryStore())])
    }

    @Test func aRenameWithoutAPreviousNameFailsNamingTheKey() throws {
        let shipped = try ShippedKeys(contentsOf: Self.listURL)
        #expect {
            try shipped.check([CarelesslyRenamedConfig(store: InMemoryStore())])
        } throws: { error in
            guard let failure = error as? ShippedKeys.Failure else { return false }
            return failure.unreadKeys == ["shipped.Settings.firstRun", "shipped.Settings.fontSize"]
                && failure.description.contains("- shipped.Settings.fontSize")
        }
        // A key dropped on purpose is listed as retired.
        #expect(
            shipped.unreadKeys(
                by: [CarelesslyRenamedConfig(store: InMemoryStore())], retired: ["shipped.Settings.fontSize"])
                == ["shipped.Settings.firstRun"])
    }

    @Test func theListingIsTheSortedKeysOneALine() {
        #expect(
            ShippedKeys.listing([ShippedAppConfig(store: InMemoryStore())])
                == "shipped.ShippedAppConfig.fontSize\nshipped.ShippedAppConfig.isFirstLaunch\n"
                + "shipped.ShippedAppConfig.userName\n")
    }
}

final class ShippedAppConfig: StorableConfig {
    override class var namespace: String { "shipped" }
    override class var previousConfigNames: [String] { ["Settings"] }
    @Setting(previousNames: ["firstRun"]) var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var fontSize = 12
}

/// The same app, where `firstRun` was renamed and `fontSize` became `textSize` with no earlier name.
final class CarelesslyRenamedConfig: StorableConfig {
    override class var namespace: String { "shipped" }
    override class var configName: String { "ShippedAppConfig" }
    override class var previousConfigNames: [String] { ["Settings"] }
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var textSize = 12
}
