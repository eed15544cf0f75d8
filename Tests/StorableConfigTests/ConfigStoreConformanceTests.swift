import Foundation
import StorableConfigTesting
import Testing

@testable import StorableConfig

/// What every store must do, checked against each of them through a freshly opened store.
struct ConfigStoreConformanceTests {
    static let everyKind: [String: StoredValue] = [
        "null": .null,
        "bool": .bool(false),
        "int": .int(.min),
        "uint": .uint(.max),
        "double": .double(-1.5e-7),
        "string": .string("ü \"quoted\" \n"),
        "data": .data(Data([0, 255])),
        "array": .array([.int(1), .string("two"), .bool(true)]),
        "dictionary": .dictionary(["nested": .dictionary(["deep": .array([.double(0.5)])])]),
    ]

    /// The forms in which a store may give a value back: a store without dates or data keeps them as text.
    static func equivalent(_ lhs: StoredValue?, _ rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let text)?, .data(let bytes)): Data(base64Encoded: text) == bytes
        case (.string(let text)?, .date(let date)): ISO8601Timestamp.date(from: text) == date
        default: lhs == rhs
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyKindOfValueReadsBackAfterReopening(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let store = fixture.open()
            for (key, value) in Self.everyKind { try store.setValue(value, forKey: key) }
            try store.setValue(.date(Date(timeIntervalSinceReferenceDate: 1.5)), forKey: "date")
        }
        let store = fixture.open()
        for (key, value) in Self.everyKind {
            #expect(Self.equivalent(try store.value(forKey: key), value), "\(key)")
        }
        #expect(Self.equivalent(try store.value(forKey: "date"), .date(Date(timeIntervalSinceReferenceDate: 1.5))))
    }

    @Test func inMemoryStorePassesTheConformanceSuite() throws {
        let store = InMemoryStore()
        try ConfigStoreConformance { store }.run()
    }

    @Test func jsonFileStorePassesTheConformanceSuite() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try ConfigStoreConformance { try JSONFileStore(url: url) }.run()
        withExtendedLifetime(directory) {}
    }

    @Test func userDefaultsStorePassesTheConformanceSuite() throws {
        let suite = "StorableConfigTests-conformance-\(UUID().uuidString)"
        defer {
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        try ConfigStoreConformance { UserDefaultsStore(suiteName: suite)! }.run()
    }
}

/// A store with two bugs a store author could make: it drops the second value of a bulk write, and its
/// read-modify-write writes as it goes, so a transform that throws leaves half its changes behind.
final class CarelessStore: ConfigStore {
    let inner = InMemoryStore()

    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }
    func setValue(_ value: StoredValue, forKey key: String) { inner.setValue(value, forKey: key) }
    func removeValue(forKey key: String) { inner.removeValue(forKey: key) }

    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) {
        for (key, value) in values.sorted(by: { $0.key < $1.key }).prefix(1) { inner.setValue(value, forKey: key) }
        for key in keysToRemove { inner.removeValue(forKey: key) }
    }

    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        var values = inner.values(forKeys: keys)
        defer { for key in keys { inner.setValues(values[key].map { [key: $0] } ?? [:], removingValuesForKeys: []) } }
        try transform(&values)
        return values
    }
}

struct ConformanceSuiteTests {
    @Test func theSuiteFindsABrokenStoreAndNamesWhatFailed() {
        let store = CarelessStore()
        #expect {
            try ConfigStoreConformance { store }.run()
        } throws: { error in
            let text = "\(error)"
            return text.contains("setValues(_:removingValuesForKeys:) applies every change")
                && text.contains("a transform that throws changes nothing")
                && !text.contains("read your writes")
        }
    }
}

/// The store that Docs/WritingAStore.md builds passes the suite, and announces changes made by others.
struct DirectoryStoreTests {
    @Test func passesTheConformanceSuite() throws {
        let directory = TemporaryDirectory()
        let url = directory.url
        try ConfigStoreConformance { try DirectoryStore(directory: url) }.run()
    }

    @Test func aFileChangedByAnotherProgramReachesTheConfigsOnReload() throws {
        let directory = TemporaryDirectory()
        let store = try DirectoryStore(directory: directory.url)
        let config = AppConfig(store: store)
        let changed = Locked<[String]>([])
        let token = config.$userName.observe { name in changed.withLock { $0.append(name) } }
        defer { token.cancel() }
        // Another program writes the file of the setting.
        try Data(#""written elsewhere""#.utf8).write(
            to: directory.url.appendingPathComponent(config.$userName.key + ".json"))
        try store.reload()
        #expect(config.userName == "written elsewhere")
        #expect(changed.withLock { $0 } == ["written elsewhere"])
    }
}
