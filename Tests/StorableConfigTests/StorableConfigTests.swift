import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct StorableConfigTests {
    @Test func keysAreNamespaceClassNameAndPropertyName() {
        let store = InMemoryStore()
        let twitter = TwitterConfig(store: store)
        let facebook = FacebookConfig(store: store)
        #expect(twitter.$userName.key == "com.example.app.TwitterConfig.userName")
        #expect(facebook.$userName.key == "com.example.app.FacebookConfig.userName")
        #expect(
            AppConfig(store: store).keys == [
                "com.example.app.AppConfig.isFirstLaunch", "com.example.app.AppConfig.userName",
                "com.example.app.AppConfig.selectedHobbies", "com.example.app.AppConfig.nickname",
            ])
    }

    @Test func namespacedSettingsWithOneNameNeverCollide() throws {
        let store = InMemoryStore()
        let twitter = TwitterConfig(store: store)
        let facebook = FacebookConfig(store: store)
        twitter.userName = "nkysu1"
        facebook.userName = "nkysu.fb"
        #expect(twitter.userName == "nkysu1")
        #expect(facebook.userName == "nkysu.fb")
        #expect(store.value(forKey: "com.example.app.TwitterConfig.userName") == .string("nkysu1"))
        #expect(store.value(forKey: "com.example.app.FacebookConfig.userName") == .string("nkysu.fb"))
    }

    @Test func defaultNamespaceIsTheBundleIdentifierOrTheExecutableName() {
        let expected = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        #expect(StorableConfig.defaultNamespace == expected)
        #expect(!StorableConfig.defaultNamespace.isEmpty)
        #expect(PlainConfig(store: InMemoryStore()).$count.key == "\(expected).PlainConfig.count")
    }

    @Test func subclassOfSubclassKeepsInheritedSettingsUnderItsOwnName() {
        let store = InMemoryStore()
        let config = DerivedSettings(store: store)
        #expect(config.keys == ["ns.DerivedSettings.theme", "ns.DerivedSettings.fontSize"])
        config.theme = "dark"
        config.fontSize = 14
        let reopened = DerivedSettings(store: store)
        #expect(reopened.theme == "dark")
        #expect(reopened.fontSize == 14)
        // The parent class on its own has its own keys.
        #expect(BaseSettings(store: store).$theme.key == "ns.BaseSettings.theme")
        #expect(BaseSettings(store: store).theme == "light")
    }

    @Test func configNameOverrideChangesTheKeys() {
        #expect(RenamedConfig(store: InMemoryStore()).$flag.key == "ns.Legacy.flag")
    }

    @Test func unsetSettingsReadTheirDefaultsAndWriteNothing() {
        let store = InMemoryStore()
        let config = AppConfig(store: store)
        #expect(config.isFirstLaunch == true)
        #expect(config.userName == "")
        #expect(config.selectedHobbies == [])
        #expect(config.nickname == nil)
        #expect(config.$isFirstLaunch.isSet == false)
        #expect(config.$isFirstLaunch.defaultValue == true)
        #expect(store.allValues.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func firstLaunchFlagReadsFalseOnTheSecondLaunch(kind: StoreKind) {
        let fixture = StoreFixture(kind)
        func launch() -> Bool {
            let config = AppConfig(store: fixture.open())
            let wasFirst = config.isFirstLaunch
            config.isFirstLaunch = false
            return wasFirst
        }
        #expect(launch() == true)
        #expect(launch() == false)
        #expect(launch() == false)
    }

    @Test(arguments: StoreKind.allCases)
    func assignmentIsStoredBeforeItReturns(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let config = AppConfig(store: store)
        config.userName = "nkysu1"
        config.selectedHobbies = ["sleep", "eat"]
        #expect(try store.value(forKey: config.$userName.key) == .string("nkysu1"))
        #expect(try store.value(forKey: config.$selectedHobbies.key) == .array([.string("sleep"), .string("eat")]))
        #expect(config.$userName.isSet)
    }

    @Test(arguments: StoreKind.allCases)
    func resetOneSettingRemovesItsStoredValue(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let config = AppConfig(store: store)
        config.userName = "nkysu1"
        config.isFirstLaunch = false
        config.$userName.reset()
        #expect(config.userName == "")
        #expect(config.$userName.isSet == false)
        #expect(try store.value(forKey: config.$userName.key) == nil)
        #expect(config.isFirstLaunch == false)
        #expect(AppConfig(store: fixture.open()).userName == "")
    }

    @Test(arguments: StoreKind.allCases)
    func resetAllRemovesOnlyThisConfigsKeys(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        try store.setValue(.string("kept"), forKey: "another.app.key")
        let app = AppConfig(store: store)
        let twitter = TwitterConfig(store: store)
        app.userName = "a"
        app.isFirstLaunch = false
        app.nickname = "n"
        twitter.userName = "t"
        app.reset()
        #expect(app.userName == "")
        #expect(app.isFirstLaunch == true)
        #expect(app.nickname == nil)
        for key in app.keys {
            #expect(try store.value(forKey: key) == nil)
        }
        #expect(twitter.userName == "t")
        #expect(try store.value(forKey: "another.app.key") == .string("kept"))
    }

    @Test(arguments: StoreKind.allCases)
    func assigningNilToAnOptionalWithNilDefaultRemovesTheValue(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let config = AppConfig(store: store)
        config.nickname = "nick"
        #expect(try store.value(forKey: config.$nickname.key) == .string("nick"))
        config.nickname = nil
        #expect(config.nickname == nil)
        #expect(try store.value(forKey: config.$nickname.key) == nil)
        #expect(config.$nickname.isSet == false)
    }

    @Test(arguments: StoreKind.allCases)
    func assigningNilToAnOptionalWithADefaultStoresNoValue(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let config = MatrixConfig(store: fixture.open())
            #expect(config.greeting == "hello")
            config.greeting = nil
            #expect(config.greeting == nil)
            #expect(config.$greeting.isSet)
            #expect(try fixture.open().value(forKey: config.$greeting.key) == .null)
        }
        let relaunched = MatrixConfig(store: fixture.open())
        #expect(relaunched.greeting == nil)
        relaunched.$greeting.reset()
        #expect(relaunched.greeting == "hello")
        #expect(MatrixConfig(store: fixture.open()).greeting == "hello")
    }

    @Test func twoInstancesOverOneStoreSeeEachOthersWritesAtOnce() {
        let store = InMemoryStore()
        let first = AppConfig(store: store)
        let second = AppConfig(store: store)
        first.userName = "nkysu1"
        #expect(second.userName == "nkysu1")
        second.selectedHobbies = ["go"]
        #expect(first.selectedHobbies == ["go"])
        second.$userName.reset()
        #expect(first.userName == "")
    }

    @Test func twoFileStoresForOneFileShareWritesAtOnce() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("shared.json")
        let first = AppConfig(store: try JSONFileStore(url: url))
        let second = AppConfig(store: try JSONFileStore(url: url))
        first.userName = "shared"
        #expect(second.userName == "shared")
    }

    @Test func twoUserDefaultsStoresForOneDefaultsObjectShareWritesAtOnce() throws {
        let fixture = StoreFixture(.userDefaults)
        let defaults = try #require((fixture.open() as? UserDefaultsStore)?.defaults)
        let first = AppConfig(store: UserDefaultsStore(defaults))
        let second = AppConfig(store: UserDefaultsStore(defaults))
        first.userName = "shared"
        #expect(second.userName == "shared")
    }

    @Test func configsOverDifferentStoresAreIndependent() {
        let first = AppConfig(store: InMemoryStore())
        let second = AppConfig(store: InMemoryStore())
        first.userName = "one"
        #expect(second.userName == "")
    }

    @Test func readsComeFromMemoryNotFromTheStore() throws {
        let store = CountingStore()
        let config = AppConfig(store: store)
        let readsAfterInit = store.reads.withLock { $0 }
        for _ in 0..<1000 { _ = config.userName }
        config.userName = "x"
        for _ in 0..<1000 { _ = config.userName }
        #expect(store.reads.withLock { $0 } == readsAfterInit)
    }

}

/// A config that creates another config in one of its property initializers.
final class NestingConfig: StorableConfig {
    override class var namespace: String { "ns" }
    @Setting var before = 1
    let inner = TwitterConfig(store: InMemoryStore())
    @Setting var after = 1
}

final class WrongTypeConfig: StorableConfig {
    override class var namespace: String { "wrongtype" }
    @Setting var enabled = false
    @Setting var profile = Profile(name: "default", age: 1)
    @Setting var limit: Int? = 10
}

final class FailingStoreConfig: StorableConfig {
    override class var namespace: String { "failing" }
    @Setting var token = ""
}

/// A store whose writes always fail.
final class FailingStore: ConfigStore {
    struct DiskOnFire: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }

    func value(forKey key: String) -> StoredValue? { nil }
    func setValue(_ value: StoredValue, forKey key: String) throws { throw DiskOnFire() }
    func removeValue(forKey key: String) throws { throw DiskOnFire() }
}

/// A store that counts reads.
final class CountingStore: ConfigStore {
    let reads = Locked(0)
    private let inner = InMemoryStore()

    func value(forKey key: String) -> StoredValue? {
        reads.withLock { $0 += 1 }
        return inner.value(forKey: key)
    }

    func setValue(_ value: StoredValue, forKey key: String) { inner.setValue(value, forKey: key) }
    func removeValue(forKey key: String) { inner.removeValue(forKey: key) }
}
