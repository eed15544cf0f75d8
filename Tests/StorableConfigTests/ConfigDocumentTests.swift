import Foundation
import StorableConfig
import Testing

/// Export and import: one versioned document, applied all or nothing.
struct ConfigDocumentTests {
    @Test func anExportCoversEveryConfigAndHoldsOnlyStoredValuesByName() throws {
        let store = InMemoryStore()
        let app = DocumentAppConfig(store: store)
        let other = DocumentOtherConfig(store: store)
        app.userName = "nkysu1"
        app.hobbies = ["sleep"]
        let document = try ConfigDocument(exporting: [app, other])
        #expect(
            document.configs == [
                "DocumentAppConfig": .init(
                    namespace: "doc", schemaVersion: 0,
                    settings: ["userName": .string("nkysu1"), "hobbies": .array([.string("sleep")])]),
                "DocumentOtherConfig": .init(namespace: "doc", schemaVersion: 0, settings: [:]),
            ])
        // The text reads back as the same document.
        #expect(try ConfigDocument(jsonText: document.jsonText()) == document)
        #expect(document.jsonText().contains(#""format": "StorableConfig settings""#))
    }

    @Test func importingIntoAnotherStoreGivesTheSameValuesAndOtherConfigsOnThatStorageSeeThem() throws {
        let source = DocumentAppConfig(store: InMemoryStore())
        source.userName = "nkysu1"
        source.volume = 0.3
        let text = try ConfigDocument(exporting: [source]).jsonText()
        let store = InMemoryStore()
        let target = DocumentAppConfig(store: store)
        let sibling = DocumentAppConfig(store: store)
        try ConfigDocument(jsonText: text).apply(to: [target])
        #expect(target.userName == "nkysu1")
        #expect(sibling.volume == 0.3)
        #expect(store.value(forKey: "doc.DocumentAppConfig.volume") == .double(0.3))
    }

    @Test func mergeKeepsWhatTheDocumentDoesNotSetAndReplaceResetsIt() throws {
        let store = InMemoryStore()
        let app = DocumentAppConfig(store: store)
        app.userName = "before"
        app.volume = 0.1
        let document = ConfigDocument(configs: [
            "DocumentAppConfig": .init(namespace: "doc", schemaVersion: 0, settings: ["userName": .string("after")])
        ])
        try document.apply(to: [app])
        #expect(app.userName == "after")
        #expect(app.volume == 0.1)
        try document.apply(to: [app], mode: .replace)
        #expect(app.volume == 0.8)
        #expect(app.$volume.isSet == false)
        #expect(store.value(forKey: "doc.DocumentAppConfig.volume") == nil)
    }

    @Test func aDocumentWithEntriesThatDoNotFitChangesNothingAndNamesEveryOne() throws {
        let store = InMemoryStore()
        let app = DocumentAppConfig(store: store)
        app.userName = "kept"
        let document = ConfigDocument(configs: [
            "DocumentAppConfig": .init(
                namespace: "doc", schemaVersion: 0,
                settings: ["userName": .string("new"), "volume": .string("loud"), "colour": .string("red")]),
            "NoSuchConfig": .init(namespace: "doc", schemaVersion: 0, settings: [:]),
        ])
        #expect {
            try document.apply(to: [app], mode: .replace)
        } throws: { error in
            guard case .doesNotFit(let problems) = error as? ConfigDocumentError else { return false }
            return problems.count == 3 && problems.contains { $0.contains("DocumentAppConfig.volume") }
                && problems.contains { $0.contains("DocumentAppConfig.colour") }
                && problems.contains { $0.contains("NoSuchConfig") }
        }
        #expect(app.userName == "kept")
        #expect(store.value(forKey: "doc.DocumentAppConfig.userName") == .string("kept"))
    }

    @Test func textThatIsNotJSONOrNotADocumentIsRefusedSayingWhich() {
        #expect(throws: ConfigDocumentError.self) { try ConfigDocument(jsonText: "{nope") }
        #expect {
            try ConfigDocument(jsonText: "{nope")
        } throws: { error in
            if case .unreadable = error as? ConfigDocumentError { return true }
            return false
        }
        for text in ["[1]", #"{"format": "other"}"#, #"{"format": "StorableConfig settings", "formatVersion": 9}"#] {
            #expect {
                try ConfigDocument(jsonText: text)
            } throws: { error in
                if case .notADocument = error as? ConfigDocumentError { return true }
                return false
            }
        }
    }

    @Test func anOlderDocumentIsMappedByPreviousNamesAndMigrated() throws {
        let store = InMemoryStore()
        let config = DocumentMigratingConfig(store: store)
        let document = ConfigDocument(configs: [
            "OldDocumentConfig": .init(
                namespace: "doc", schemaVersion: 1,
                settings: ["fadeMilliseconds": .int(1500), "name": .string("renamed")])
        ])
        try document.apply(to: [config])
        #expect(config.fadeDuration == 1.5)
        #expect(config.userName == "renamed")
        #expect(store.value(forKey: "doc.DocumentMigratingConfig.@schemaVersion") == .int(2))
        #expect(store.value(forKey: "doc.DocumentMigratingConfig.fadeMilliseconds") == nil)
    }

    @Test func aDocumentFromANewerSchemaVersionDoesNotFit() {
        let config = DocumentMigratingConfig(store: InMemoryStore())
        let document = ConfigDocument(configs: [
            "DocumentMigratingConfig": .init(namespace: "doc", schemaVersion: 3, settings: [:])
        ])
        #expect(throws: ConfigDocumentError.self) { try document.apply(to: [config]) }
    }

    @Test func twoConfigsOfOneNameCannotShareADocument() throws {
        let first = InMemoryStore()
        let second = InMemoryStore()
        let app = DocumentAppConfig(store: first)
        app.userName = "first"
        let elsewhere = DocumentAppConfig(store: second)
        elsewhere.userName = "second"
        // The same class on the same store twice is one config.
        let twice = try ConfigDocument(exporting: [app, DocumentAppConfig(store: first)])
        #expect(twice.configs["DocumentAppConfig"]?.settings["userName"] == .string("first"))
        // Two classes of one name, or one class over two stores: which values would the entry hold?
        for configs in [[app, elsewhere], [app, SameNamedAppConfig(store: first)]] as [[StorableConfig]] {
            #expect {
                _ = try ConfigDocument(exporting: configs)
            } throws: { error in
                guard case .ambiguous(let reason) = error as? ConfigDocumentError else { return false }
                return reason.contains("'DocumentAppConfig'")
            }
        }
        // And an import that could go to either is refused, changing neither.
        let document = ConfigDocument(configs: [
            "DocumentAppConfig": .init(namespace: "doc", schemaVersion: 0, settings: ["userName": .string("new")])
        ])
        #expect {
            try document.apply(to: [app, elsewhere])
        } throws: { error in
            guard case .doesNotFit(let problems) = error as? ConfigDocumentError else { return false }
            return problems.contains { $0.contains("'DocumentAppConfig' could be any of") }
        }
        #expect(app.userName == "first" && elsewhere.userName == "second")
    }
}

final class DocumentAppConfig: StorableConfig {
    override class var namespace: String { "doc" }
    @Setting var userName = ""
    @Setting var hobbies: [String] = []
    @Setting var volume = 0.8
}

/// Another class that calls itself DocumentAppConfig.
final class SameNamedAppConfig: StorableConfig {
    override class var namespace: String { "other" }
    override class var configName: String { "DocumentAppConfig" }
    @Setting var userName = ""
}

final class DocumentOtherConfig: StorableConfig {
    override class var namespace: String { "doc" }
    @Setting var token = ""
}

final class DocumentMigratingConfig: StorableConfig {
    override class var namespace: String { "doc" }
    override class var previousConfigNames: [String] { ["OldDocumentConfig"] }
    @Setting var fadeDuration = 0.25
    @Setting(previousNames: ["name"]) var userName = ""

    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 2, "fade in seconds") { values in
                if let milliseconds = try values.value("fadeMilliseconds", as: Int.self) {
                    try values.setValue(Double(milliseconds) / 1000, for: "fadeDuration")
                    values.removeValue(for: "fadeMilliseconds")
                }
            }
        ]
    }
}
