import Foundation
import Testing

@testable import StorableConfig

/// Explicit keys, and values found under earlier names and keys: a rename never loses a stored value.
struct KeysTests {
    @Test func anExplicitKeyIsUsedExactlyAsGiven() {
        let store = InMemoryStore(["plainVolume": .double(0.3)])
        let config = ExplicitKeyConfig(store: store)
        #expect(config.$volume.key == "plainVolume")
        #expect(config.volume == 0.3)
        config.volume = 0.7
        #expect(store.value(forKey: "plainVolume") == .double(0.7))
        #expect(config.$theme.key == "keys.ExplicitKeyConfig.theme")
    }

    @Test(arguments: StoreKind.allCases)
    func aRenamedPropertyFindsItsValueAndMovesIt(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let store = fixture.open()
            try store.setValue(.string("nkysu1"), forKey: "keys.RenamedPropertyConfig.name")
            try store.setValue(.bool(false), forKey: "keys.RenamedPropertyConfig.firstRun")
        }
        do {
            let store = fixture.open()
            let config = RenamedPropertyConfig(store: store)
            #expect(config.userName == "nkysu1")
            #expect(config.isFirstLaunch == false)
            #expect(config.$userName.isSet)
            #expect(try store.value(forKey: "keys.RenamedPropertyConfig.userName") == .string("nkysu1"))
            #expect(try store.value(forKey: "keys.RenamedPropertyConfig.name") == nil)
            #expect(try store.value(forKey: "keys.RenamedPropertyConfig.firstRun") == nil)
            // Nothing can come back: after a reset the setting reads its default, in this run and the next.
            config.reset()
            #expect(config.userName == "")
        }
        let reopened = RenamedPropertyConfig(store: fixture.open())
        #expect(reopened.userName == "")
        #expect(reopened.isFirstLaunch == true)
    }

    /// Every move removes the earlier keys' values, so a value at an earlier key beside one at the current key
    /// was written since, by code that still uses the earlier key: it is the newer, and it is moved.
    @Test func aValueAtAnEarlierKeyBesideOneAtTheCurrentKeyIsTheNewerAndIsMoved() {
        let store = InMemoryStore([
            "keys.RenamedPropertyConfig.userName": .string("current"),
            "keys.RenamedPropertyConfig.name": .string("written since"),
        ])
        let config = RenamedPropertyConfig(store: store)
        #expect(config.userName == "written since")
        #expect(store.value(forKey: "keys.RenamedPropertyConfig.userName") == .string("written since"))
        #expect(store.value(forKey: "keys.RenamedPropertyConfig.name") == nil)
    }

    @Test func previousKeysComeFirstInTheOrderWrittenAndAValueOfTheWrongTypeIsReportedAndKept() {
        ReportedErrors.install()
        let store = InMemoryStore([
            "legacy.first": .string("not a number"),
            "legacy.second": .int(42),
        ])
        let config = PreviousKeysConfig(store: store)
        #expect(config.limit == 42)
        #expect(store.value(forKey: "legacy.first") == .string("not a number"))
        #expect(store.value(forKey: "legacy.second") == nil)
        #expect(store.value(forKey: "keys.PreviousKeysConfig.limit") == .int(42))
        let reported = ReportedErrors.mentioning("'legacy.first'")
        #expect(reported.count == 1)
        #expect(reported.first?.description.contains("Int") == true)
    }

    @Test(arguments: [StoreKind.memory, .jsonFile])
    func aKeyTheStoreCannotReadHoldsBackNoOtherMoveAndIsReportedUnderItsOwnName(kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        let inner = fixture.open()
        try inner.setValue(.bool(false), forKey: "keys.RenamedPropertyConfig.firstRun")
        try inner.setValue(.string("old"), forKey: "keys.RenamedPropertyConfig.name")
        // The current key of `userName` holds what the store cannot read (in etcd: text that is not JSON).
        let store = OneKeyUnreadableStore(inner, unreadableKey: "keys.RenamedPropertyConfig.userName")
        let config = RenamedPropertyConfig(store: store)
        #expect(config.isFirstLaunch == false)
        #expect(try inner.value(forKey: "keys.RenamedPropertyConfig.isFirstLaunch") == .bool(false))
        #expect(try inner.value(forKey: "keys.RenamedPropertyConfig.firstRun") == nil)
        // `userName` is not moved: its current key may hold a value.
        #expect(try inner.value(forKey: "keys.RenamedPropertyConfig.name") == .string("old"))
        let reported = ReportedErrors.mentioning("'keys.RenamedPropertyConfig.userName'")
        #expect(reported.contains { if case .readFailed = $0 { true } else { false } })
        #expect(ReportedErrors.mentioning("'keys.RenamedPropertyConfig.isFirstLaunch'").isEmpty)
    }

    @Test func aRenamedClassWithARenamedPropertyInARenamedNamespaceIsFound() {
        let store = InMemoryStore([
            "old-keys.Settings.fontPoints": .int(14),
            "keys.Preferences.colour": .string("red"),
        ])
        let config = RenamedClassConfig(store: store)
        #expect(config.fontSize == 14)
        #expect(config.color == "red")
        #expect(store.value(forKey: "keys.RenamedClassConfig.fontSize") == .int(14))
        #expect(store.value(forKey: "keys.RenamedClassConfig.color") == .string("red"))
        #expect(store.value(forKey: "old-keys.Settings.fontPoints") == nil)
        #expect(store.value(forKey: "keys.Preferences.colour") == nil)
    }

    @Test func earlierKeysAreSearchedInTheDocumentedOrder() {
        let config = RenamedClassConfig(store: InMemoryStore())
        #expect(
            config.schema.earlierKeys[0] == [
                "keys.RenamedClassConfig.fontPoints",
                "keys.Preferences.fontSize", "keys.Preferences.fontPoints",
                "keys.Settings.fontSize", "keys.Settings.fontPoints",
                "old-keys.RenamedClassConfig.fontSize", "old-keys.RenamedClassConfig.fontPoints",
                "old-keys.Preferences.fontSize", "old-keys.Preferences.fontPoints",
                "old-keys.Settings.fontSize", "old-keys.Settings.fontPoints",
            ])
        #expect(config.$fontSize.previousKeys == config.schema.earlierKeys[0])
    }

    @Test func aRecordCollectionFindsItsRecordsUnderAnEarlierName() {
        let store = InMemoryStore([
            "keys.RenamedRecordsConfig.items": .dictionary(["a": .dictionary(["id": .string("a"), "size": .int(1)])])
        ])
        let config = RenamedRecordsConfig(store: store)
        #expect(config.parts.count == 1)
        #expect(config.parts["a"]?.size == 1)
        #expect(store.value(forKey: "keys.RenamedRecordsConfig.items") == nil)
    }

    @Test func movesAreOneWriteAndHappenBeforeInitReturns() {
        let store = UpdateCountingStore([
            "keys.RenamedPropertyConfig.name": .string("n"), "keys.RenamedPropertyConfig.firstRun": .bool(false),
        ])
        _ = RenamedPropertyConfig(store: store)
        #expect(store.updates == 1)
        #expect(store.inner.value(forKey: "keys.RenamedPropertyConfig.userName") == .string("n"))
        _ = RenamedPropertyConfig(store: store)
        #expect(store.updates == 1, "a second start has nothing to move and writes nothing")
    }

    @Test func anEarlierKeyThatIsAnotherSettingsKeyStopsTheProgram() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StealingConfig(store: InMemoryStore())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("StealingConfig.b"))
        #expect(message.contains("keys.StealingConfig.a"))
    }

    @Test func anEarlierKeyThatIsTheKeyOfAnotherLiveClassIsFollowedInsteadOfStoppingTheProgram() {
        ReportedErrors.install()
        let store = InMemoryStore()
        let owner = ExplicitKeyConfig(store: store)
        owner.volume = 0.8
        let stealer = StealingOtherConfig(store: store)
        #expect(stealer.level == 0.8)
        owner.volume = 0.3
        #expect(stealer.level == 0.3)
        #expect(store.value(forKey: "keys.StealingOtherConfig.level") == .double(0.3))
        #expect(store.value(forKey: "plainVolume") == nil)
        let reports = ReportedErrors.mentioning("plainVolume").filter {
            if case .earlierKeyInUse = $0 { return true }
            return false
        }
        #expect(reports.count == 1)
        #expect(reports.first?.description.contains("ExplicitKeyConfig") == true)
        #expect(reports.first?.description.contains("StealingOtherConfig") == true)
        // On different stores the two classes do not meet.
        _ = ExplicitKeyConfig(store: InMemoryStore())
        _ = StealingOtherConfig(store: InMemoryStore())
    }

    @Test func theDefaultFileOfAPreviousNamespaceIsReadAndItsValuesMoved() async throws {
        await #expect(processExitsWith: .success) {
            let directory = TemporaryDirectory()
            setenv("XDG_CONFIG_HOME", directory.url.path, 1)
            let oldURL = JSONFileStore.defaultURL(namespace: "old-product")
            do {
                let old = try JSONFileStore(url: oldURL)
                try old.setValue(.int(3), forKey: "old-product.NamespaceConfig.retries")
                try old.setValue(.string("kept"), forKey: "old-product.Other.value")
            }
            let current = try JSONFileStore(url: JSONFileStore.defaultURL(namespace: StorableConfig.defaultNamespace))
            let config = NamespaceConfig(store: current)
            guard config.retries == 3,
                current.value(forKey: "\(StorableConfig.defaultNamespace).NamespaceConfig.retries") == .int(3)
            else { exit(1) }
            let old = try jsonObject(at: oldURL)
            guard old["old-product.NamespaceConfig.retries"] == nil, old["old-product.Other.value"] as? String == "kept"
            else { exit(2) }
        }
    }
}

final class ExplicitKeyConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Setting(key: "plainVolume") var volume = 0.5
    @Setting var theme = "light"
}

final class RenamedPropertyConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Setting(previousNames: ["name"]) var userName = ""
    @Setting(previousNames: ["firstLaunch", "firstRun"]) var isFirstLaunch = true
}

final class PreviousKeysConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Setting(previousKeys: ["legacy.first", "legacy.second"]) var limit = 0
}

final class RenamedClassConfig: StorableConfig {
    override class var namespace: String { "keys" }
    override class var previousConfigNames: [String] { ["Preferences", "Settings"] }
    override class var previousNamespaces: [String] { ["old-keys"] }
    @Setting(previousNames: ["fontPoints"]) var fontSize = 12
    @Setting(previousNames: ["colour"]) var color = "blue"
}

struct Part: Codable, Identifiable, Sendable {
    var id: String
    var size: Int
}

final class RenamedRecordsConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Records(previousNames: ["items"]) var parts: RecordCollection<Part>
}

final class StealingConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Setting var a = 1
    @Setting(previousNames: ["a"]) var b = 2
}

final class StealingOtherConfig: StorableConfig {
    override class var namespace: String { "keys" }
    @Setting(previousKeys: ["plainVolume"]) var level = 0.0
}

final class NamespaceConfig: StorableConfig {
    override class var previousNamespaces: [String] { ["old-product"] }
    @Setting var retries = 1
}

/// An in-memory store that counts read-modify-writes.
final class UpdateCountingStore: ConfigStore, @unchecked Sendable {
    let inner: InMemoryStore
    private let count = Locked(0)
    var updates: Int { count.withLock { $0 } }

    init(_ values: [String: StoredValue]) {
        inner = InMemoryStore(values)
    }

    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }
    func setValue(_ value: StoredValue, forKey key: String) { inner.setValue(value, forKey: key) }
    func removeValue(forKey key: String) { inner.removeValue(forKey: key) }
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        count.withLock { $0 += 1 }
        return try inner.updateValues(forKeys: keys, transform)
    }
}

/// A store over another that cannot read one key, as an etcd store cannot read text that is not JSON: reading it,
/// alone or with others, throws; the other keys work.
final class OneKeyUnreadableStore: ConfigStore, @unchecked Sendable {
    let inner: any ConfigStore
    let unreadableKey: String

    struct Unreadable: Error, CustomStringConvertible {
        let key: String
        var description: String { "the value of \(key) is not JSON text" }
    }

    init(_ inner: any ConfigStore, unreadableKey: String) {
        self.inner = inner
        self.unreadableKey = unreadableKey
    }

    private func check(_ keys: [String]) throws {
        if keys.contains(unreadableKey) { throw Unreadable(key: unreadableKey) }
    }

    func value(forKey key: String) throws -> StoredValue? {
        try check([key])
        return try inner.value(forKey: key)
    }
    func setValue(_ value: StoredValue, forKey key: String) throws { try inner.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws { try inner.removeValue(forKey: key) }
    func values(forKeys keys: [String]) throws -> [String: StoredValue] {
        try check(keys)
        return try inner.values(forKeys: keys)
    }
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try check(keys)
        return try inner.updateValues(forKeys: keys, transform)
    }
}
