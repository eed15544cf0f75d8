import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a config does with what its store holds: foreign keys, values of the wrong type, failed writes,
/// reloads and the default store.
struct StoredValuesTests {
    @Test func keysTheConfigDoesNotDeclareAreNeverTouched() throws {
        let store = InMemoryStore(["other.app.key": .int(7), "com.example.app.AppConfig.oldSetting": .bool(true)])
        let config = AppConfig(store: store)
        config.userName = "x"
        config.reset()
        #expect(store.allValues == ["other.app.key": .int(7), "com.example.app.AppConfig.oldSetting": .bool(true)])
    }

    @Test func aStoredValueOfTheWrongTypeReadsAsTheDefaultIsReportedAndIsKept() throws {
        ReportedErrors.install()
        let store = InMemoryStore(["wrongtype.WrongTypeConfig.enabled": .string("yes")])
        let config = WrongTypeConfig(store: store)
        #expect(config.enabled == false)
        #expect(config.$enabled.isSet)
        let reported = ReportedErrors.mentioning("wrongtype.WrongTypeConfig.enabled")
        #expect(reported.count == 1)
        let message = try #require(reported.first).description
        #expect(message.contains("not a Bool"))
        #expect(message.contains("\"yes\""))
        // Left untouched until the user assigns.
        #expect(store.value(forKey: "wrongtype.WrongTypeConfig.enabled") == .string("yes"))
        config.enabled = true
        #expect(store.value(forKey: "wrongtype.WrongTypeConfig.enabled") == .bool(true))
    }

    @Test func anOptionalSettingWithAStoredValueOfTheWrongTypeReadsAsItsDefaultAndIsReported() throws {
        ReportedErrors.install()
        let key = "wrongtype.WrongTypeConfig.limit"
        let store = InMemoryStore([key: .string("many")])
        let config = WrongTypeConfig(store: store)
        #expect(config.limit == 10)
        #expect(ReportedErrors.mentioning(key).count == 1)
        #expect(store.value(forKey: key) == .string("many"))
    }

    @Test func aStructThatNoLongerDecodesReadsAsTheDefaultAndIsReported() throws {
        ReportedErrors.install()
        let key = "wrongtype.WrongTypeConfig.profile"
        // Not an object at all: no field of it can be read (a struct that lacks a field reads the default's field
        // and keeps the others: EvolvingValueTests).
        let store = InMemoryStore([key: .array([.string("x")])])
        let config = WrongTypeConfig(store: store)
        #expect(config.profile == Profile(name: "default", age: 1))
        let message = try #require(ReportedErrors.mentioning(key).first).description
        #expect(message.contains("Profile"))
        #expect(store.value(forKey: key) == .array([.string("x")]))
    }

    @Test func laterInstancesFindTheirOwnSettings() throws {
        let store = InMemoryStore()
        let first = DerivedSettings(store: store)
        let second = DerivedSettings(store: store)
        let third = DerivedSettings(store: InMemoryStore())
        #expect(second.keys == first.keys)
        third.fontSize = 30
        second.theme = "dark"
        #expect(first.theme == "dark")
        #expect(second.fontSize == 12)
        #expect(third.theme == "light")
        // Each instance has boxes of its own.
        #expect(second.$theme !== first.$theme)
        #expect(second.allSettings.map(\.name) == ["theme", "fontSize"])
    }

    @Test func strayAndNestedSettingsDoNotConfuseWhichSettingsAConfigOwns() throws {
        let store = InMemoryStore()
        _ = NestingConfig(store: store)
        let stray = Setting(wrappedValue: 42)
        let config = NestingConfig(store: store)
        #expect(config.allSettings.map(\.name) == ["before", "after"])
        #expect(config.inner.allSettings.map(\.name) == ["userName"])
        config.after = 2
        #expect(store.value(forKey: "ns.NestingConfig.after") == .int(2))
        #expect(stray.wrappedValue == 42)
        #expect(stray.key.isEmpty)
    }

    @Test func aDeliveryOlderThanTheValueHeldIsIgnored() throws {
        let store = InMemoryStore()
        let config = AppConfig(store: store)
        config.userName = "newer"
        let box = try #require(config.allSettings.first { $0.name == "userName" } as? any SettingBox)
        // What a write that the store applied earlier, but whose thread was slower, would deliver.
        box.load(.string("older"), typedValue: nil, version: 0, isFirstLoad: false)
        #expect(config.userName == "newer")
        box.load(.string("newest"), typedValue: nil, version: .max, isFirstLoad: false)
        #expect(config.userName == "newest")
    }

    @Test func settingsAssignedBeforeSuperInitAreDefaultsAndAfterAreWrites() throws {
        let store = InMemoryStore()
        let config = InitializingConfig(store: store, defaultLevel: 5)
        #expect(config.level == 5)
        #expect(config.$level.defaultValue == 5)
        #expect(config.$level.isSet == false)
        #expect(config.launches == 1)
        #expect(store.value(forKey: config.$launches.key) == .int(1))
        #expect(InitializingConfig(store: store, defaultLevel: 5).launches == 2)
    }

    @Test func plainStoredPropertiesAreNotSettings() {
        let store = InMemoryStore()
        let config = MixedConfig(store: store)
        config.transientCounter = 9
        config.persisted = 2
        #expect(config.keys == ["ns.MixedConfig.persisted"])
        #expect(store.allValues == ["ns.MixedConfig.persisted": .int(2)])
    }

    @Test func aFailedWriteKeepsTheAssignedValueReadableAndIsReported() throws {
        ReportedErrors.install()
        let store = FailingStore()
        let config = FailingStoreConfig(store: store)
        config.token = "secret"
        #expect(config.token == "secret")
        let message = try #require(ReportedErrors.mentioning("failing.FailingStoreConfig.token").first).description
        #expect(message.contains("disk on fire"))
    }

    @Test func aValueThatCannotBeEncodedIsReportedKeptInMemoryAndTheStoreKeepsTheLastOne() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let key = "picky.PickyConfig.label"
        do {
            let config = PickyConfig(store: try JSONFileStore(url: url))
            config.label = PickyLabel(text: "stored")
            config.label = PickyLabel(text: "unencodable")
            #expect(config.label.text == "unencodable")
            let reported = ReportedErrors.mentioning("'\(key)'")
            #expect(reported.count == 1)
            #expect(reported.allSatisfy { "\($0)".contains("cannot be stored") && "\($0)".contains("never stored") })
            // Another setting's write does not write it either: the file keeps the last value stored.
            config.count = 1
            #expect((try jsonObject(at: url)[key] as? [String: String]) == ["text": "stored"])
        }
        #expect(PickyConfig(store: try JSONFileStore(url: url)).label.text == "stored")
    }

    @Test func reloadPicksUpChangesMadeBehindTheConfigsBack() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = AppConfig(store: try JSONFileStore(url: url))
        let other = AppConfig(store: try JSONFileStore(url: url))
        config.userName = "before"
        // Another program (or a person) edits the file.
        try Data(#"{"com.example.app.AppConfig.userName": "edited by hand"}"#.utf8).write(to: url)
        #expect(config.userName == "before")
        try config.reload()
        #expect(config.userName == "edited by hand")
        #expect(other.userName == "edited by hand")
    }

    @Test func theDefaultStoreOnLinuxIsAJSONFileUnderTheConfigDirectory() async {
        #if !canImport(Darwin)
            await #expect(processExitsWith: .success) {
                let home = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "StorableConfigTests-home-\(getpid())")
                defer { try? FileManager.default.removeItem(at: home) }
                setenv("HOME", home.path, 1)
                unsetenv("XDG_CONFIG_HOME")
                // The platform's store, not the in-memory one that a test runner gets.
                setenv("STORABLE_CONFIG_DEFAULT_STORE", "platform", 1)
                let config = PlainConfig()
                config.count = 5
                let expected = home.appendingPathComponent(
                    ".config/\(StorableConfig.defaultNamespace)/settings.json")
                guard let store = config.store as? JSONFileStore, store.url.path == expected.path,
                    let object = try? jsonObject(at: expected), object[config.$count.key] as? Int == 5
                else { exit(1) }
                exit(0)
            }
        #endif
    }

    @Test func anUnusableDefaultLocationFallsBackToMemoryAndIsReported() async {
        #if !canImport(Darwin)
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                // XDG_CONFIG_HOME is a file, so no directory can be made under it.
                let blocker = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "StorableConfigTests-blocker-\(getpid())")
                defer { try? FileManager.default.removeItem(at: blocker) }
                ExitTestChild.attempt(2, "writing \(blocker.path)") { try Data("file".utf8).write(to: blocker) }
                setenv("XDG_CONFIG_HOME", blocker.path, 1)
                setenv("STORABLE_CONFIG_DEFAULT_STORE", "platform", 1)
                let config = PlainConfig()
                config.count = 5
                guard config.store is InMemoryStore, config.count == 5 else { exit(1) }
                exit(0)
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("StorableConfigTests-blocker-"))
        #endif
    }

    @Test func aDefaultNamespaceThatIsNotOnePathComponentFallsBackToMemoryAndIsReported() async throws {
        #if !canImport(Darwin)
            let base = TemporaryDirectory()
            let configHome = base.file("config").path
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                [configHome = configHome as String] in
                setenv("XDG_CONFIG_HOME", configHome, 1)
                setenv("STORABLE_CONFIG_DEFAULT_STORE", "platform", 1)
                StorableConfig.defaultNamespace = ".."
                let config = PlainConfig()
                config.count = 5
                guard config.store is InMemoryStore, config.count == 5 else { exit(1) }
                exit(0)
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("the namespace \"..\""), "\(message)")
            // Not $XDG_CONFIG_HOME/../settings.json, nor anything else.
            #expect(try FileManager.default.contentsOfDirectory(atPath: base.url.path) == [])
        #endif
    }

    @Test func parameterlessInitUsesTheReplaceableDefaultStore() {
        // The only test that touches the process-wide default store.
        let store = InMemoryStore()
        StorableConfig.defaultStore = store
        let config = PlainConfig()
        #expect(config.store === store)
        config.count = 3
        #expect(store.value(forKey: config.$count.key) == .int(3))
    }

    @Test func aSettingHandleOutlivesItsConfig() throws {
        let store = InMemoryStore()
        var config: AppConfig? = AppConfig(store: store)
        let handle = config!.$userName
        config = nil
        handle.wrappedValue = "still works"
        #expect(store.value(forKey: "com.example.app.AppConfig.userName") == .string("still works"))
        #expect(handle.key == "com.example.app.AppConfig.userName")
    }

    @Test func configsAreFreedWhenDropped() {
        let store = InMemoryStore()
        weak var weakConfig: AppConfig?
        do {
            let config = AppConfig(store: store)
            let other = AppConfig(store: store)
            config.userName = "x"
            #expect(other.userName == "x")
            weakConfig = config
        }
        #expect(weakConfig == nil)
    }
}

/// A value whose encoding throws for one text: its default can be stored, so its class is valid.
struct PickyLabel: Codable, Equatable, Sendable {
    var text: String

    func encode(to encoder: any Encoder) throws {
        guard text != "unencodable" else {
            throw EncodingError.invalidValue(text, .init(codingPath: [], debugDescription: "this text is never stored"))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
    }
}

final class PickyConfig: StorableConfig {
    override class var namespace: String { "picky" }
    @Setting var label = PickyLabel(text: "default")
    @Setting var count = 0
}
