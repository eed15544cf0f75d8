import Foundation
import StorableConfigSchema
import Testing

@testable import StorableConfig

/// Edge cases found in review of renames, migrations, imports, validation, secrets and overrides.
struct EdgeCaseTests {
    @Test func aRenamedClassFindsItsSchemaVersionAndDoesNotMigrateAgain() {
        let store = InMemoryStore([
            "edge.OldPlayer.fade": .double(2.0), "edge.OldPlayer.@schemaVersion": .int(2),
        ])
        let config = RenamedPlayerConfig(store: store)
        #expect(config.fade == 2.0)
        #expect(store.value(forKey: "edge.RenamedPlayerConfig.@schemaVersion") == .int(2))
        #expect(store.value(forKey: "edge.OldPlayer.@schemaVersion") == nil)
    }

    @Test func anImportCannotTakeAStoreBackToAnOlderSchemaVersion() throws {
        let store = InMemoryStore(["edge.RenamedPlayerConfig.@schemaVersion": .int(5)])
        let config = RenamedPlayerConfig(store: store)
        let document = ConfigDocument(configs: [
            "RenamedPlayerConfig": .init(namespace: "edge", schemaVersion: 2, settings: ["fade": .double(1)])
        ])
        #expect(throws: ConfigDocumentError.self) { try document.apply(to: [config]) }
        #expect(store.value(forKey: "edge.RenamedPlayerConfig.@schemaVersion") == .int(5))
        // And an export says which version the values are in: the store's.
        #expect(try ConfigDocument(exporting: [config]).configs["RenamedPlayerConfig"]?.schemaVersion == 5)
    }

    @Test func anImportForConfigsOnTwoStoresDoesNotFit() {
        let first = DocumentAppConfig(store: InMemoryStore())
        let second = DocumentOtherConfig(store: InMemoryStore())
        let document = ConfigDocument(configs: [
            "DocumentAppConfig": .init(namespace: "doc", schemaVersion: 0, settings: ["userName": .string("a")]),
            "DocumentOtherConfig": .init(namespace: "doc", schemaVersion: 0, settings: ["token": .string("b")]),
        ])
        #expect(throws: ConfigDocumentError.self) { try document.apply(to: [first, second]) }
        #expect(first.userName == "")
    }

    @Test func aValueFromAnotherConfigSharingTheKeyIsStillValidated() {
        ReportedErrors.install()
        let store = InMemoryStore()
        let loose = LooseVolumeConfig(store: store)
        let strict = StrictVolumeConfig(store: store)
        loose.volume = 2
        #expect(loose.volume == 2)
        #expect(strict.volume == 0.5)
        #expect(ReportedErrors.mentioning("edge.SharedVolume.volume").count == 1)
    }

    @Test func aFailingMigrationOverASecretDoesNotNameIt() {
        ReportedErrors.install()
        _ = SecretMigrationConfig(store: InMemoryStore(["edge.SecretMigrationConfig.pin": .string("SECRET-P2")]))
        // The failed migration, and the load of a value that is not an Int.
        let reported = ReportedErrors.mentioning("SecretMigrationConfig")
        #expect(reported.count == 2)
        #expect(!"\(reported)".contains("SECRET-P2"))
    }

    @Test func aConfigChangeDumpsNoSecret() {
        var dumped = ""
        dump(
            ConfigChange(
                name: "token", key: "k", oldValue: "OLD-SECRET", newValue: "NEW-SECRET", isSecret: true, origin: nil),
            to: &dumped)
        #expect(!dumped.contains("SECRET"))
    }

    @Test func aRangeOfTextIsCheckedButNotDescribedAsNumbers() throws {
        let schema = StorableConfig.jsonSchema(of: [TextRangeConfig(store: InMemoryStore())])
        #expect(!schema.contains("minimum"))
        #expect(schema.contains("\"type\": \"string\""))
    }

    @Test func aResetRemovesValuesLeftUnderEarlierKeys() {
        let store = InMemoryStore([
            "keys.RenamedPropertyConfig.firstRun": .bool(false),
            "keys.RenamedPropertyConfig.isFirstLaunch": .bool(false),
        ])
        let config = RenamedPropertyConfig(store: store)
        config.$isFirstLaunch.reset()
        #expect(store.value(forKey: "keys.RenamedPropertyConfig.firstRun") == nil)
        #expect(RenamedPropertyConfig(store: store).isFirstLaunch == true)
    }

    @Test func anOptionWithoutItsValueIsReportedAndOptionsEndAtADoubleDash() {
        let config = OverriddenConfig(
            store: InMemoryStore(), environment: [:],
            arguments: [
                "program", "--overridden-config-user-name", "--overridden-config-port", "--",
                "--overridden-config-host=h",
            ])
        #expect(config.overrideProblems.count == 2)
        #expect(config.overrideProblems.allSatisfy { "\($0)".contains("needs a value") })
        #expect(config.host == "localhost")
        let remaining = ConfigOverrides.removingSettingArguments(
            from: ["get", "--", "--overridden-config-host=h"], of: [config])
        #expect(remaining == ["get", "--", "--overridden-config-host=h"])
    }
}

final class RenamedPlayerConfig: StorableConfig {
    override class var namespace: String { "edge" }
    override class var previousConfigNames: [String] { ["OldPlayer"] }
    @Setting var fade = 0.5
    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 2, "milliseconds to seconds") { values in
                if let milliseconds = try values.value("fade", as: Double.self) {
                    try values.setValue(milliseconds / 1000, for: "fade")
                }
            }
        ]
    }
}

final class LooseVolumeConfig: StorableConfig {
    override class var namespace: String { "edge" }
    override class var configName: String { "SharedVolume" }
    @Setting var volume = 0.5
}

final class StrictVolumeConfig: StorableConfig {
    override class var namespace: String { "edge" }
    override class var configName: String { "SharedVolume" }
    @Setting(in: 0...1) var volume = 0.5
}

final class SecretMigrationConfig: StorableConfig {
    override class var namespace: String { "edge" }
    @Setting(secret: true) var pin = 0
    override class var migrations: [ConfigMigration] {
        [ConfigMigration(to: 1) { values in _ = try values.value("pin", as: Int.self) }]
    }
}

final class TextRangeConfig: StorableConfig {
    override class var namespace: String { "edge" }
    @Setting(in: "a"..."m") var initial = "c"
}
