import Foundation
import Testing

@testable import StorableConfig

/// Values stored by the codec of 2026-11-21 (JSONEncoder text parsed into a StoredValue tree) read back the
/// same with today's codec, in every store's format: the JSON file, the UserDefaults property list, and the
/// in-memory tree. The files in Fixtures/Codec were written by that codec; set
/// STORABLE_CONFIG_WRITE_CODEC_FIXTURES to a directory to write them again with the codec of the day.
struct CodecFixtureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Codec", isDirectory: true)

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// The in-memory form: every key's tree, with every case and bit.
    static func storedTrees() throws -> [String: StoredValue] {
        guard
            case .dictionary(let tagged) = try StoredValue(
                jsonText: String(decoding: try fixture("stored-values.json"), as: UTF8.self))
        else { throw TaggedStoredValue.Malformed() }
        return try tagged.mapValues(TaggedStoredValue.untag)
    }

    @Test func aJSONFileWrittenByTheEarlierCodecReadsBackTheSameValues() throws {
        let temporary = TemporaryDirectory()
        let url = temporary.file("settings.json")
        try Self.fixture("settings.json").write(to: url)
        let config = CodecFixtureConfig(store: try JSONFileStore(url: url))
        #expect(CodecFixtures.differences(in: config) == [])
    }

    @Test func aPropertyListWrittenByTheEarlierCodecReadsBackTheSameValues() throws {
        let suite = "StorableConfigTests-codec-\(UUID().uuidString)"
        let url = UserDefaultsStore.propertyListURL(domain: suite)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.fixture("settings.plist").write(to: url)
        defer {
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: url)
        }
        let config = CodecFixtureConfig(store: try #require(UserDefaultsStore(suiteName: suite)))
        #expect(CodecFixtures.differences(in: config) == [])
    }

    @Test func storedTreesWrittenByTheEarlierCodecReadBackTheSameValues() throws {
        let config = CodecFixtureConfig(store: InMemoryStore(try Self.storedTrees()))
        #expect(CodecFixtures.differences(in: config) == [])
    }

    /// Values read from the fixtures, assigned again, are stored as the very trees they were read from.
    @Test func todaysCodecStoresTheVeryTreesTheEarlierOneStored() throws {
        let expected = try Self.storedTrees()
        let read = CodecFixtureConfig(store: InMemoryStore(expected))
        let store = InMemoryStore()
        let written = CodecFixtureConfig(store: store)
        CodecFixtures.copy(read, to: written)
        #expect(Set(store.allValues.keys) == Set(expected.keys))
        for (key, tree) in expected {
            #expect(Self.sameBits(store.allValues[key], tree), "\(key)")
        }
    }

    /// Equality that tells NaNs apart from other numbers but not from each other.
    static func sameBits(_ lhs: StoredValue?, _ rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.double(let a)?, .double(let b)): a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case (.array(let a)?, .array(let b)): a.count == b.count && zip(a, b).allSatisfy { sameBits($0, $1) }
        case (.dictionary(let a)?, .dictionary(let b)):
            a.keys.sorted() == b.keys.sorted() && a.allSatisfy { sameBits($0.value, b[$0.key]!) }
        default: lhs == rhs
        }
    }

    /// Writes the fixtures with the codec of the day, when asked to.
    @Test func writeFixturesWhenAsked() throws {
        guard let path = ProcessInfo.processInfo.environment["STORABLE_CONFIG_WRITE_CODEC_FIXTURES"] else { return }
        let output = URL(fileURLWithPath: path, isDirectory: true)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        // The JSON file store's file.
        let temporary = TemporaryDirectory()
        let fileStore = try JSONFileStore(url: temporary.file("settings.json"))
        CodecFixtures.assign(to: CodecFixtureConfig(store: fileStore))
        try Data(contentsOf: temporary.file("settings.json")).write(to: output.appendingPathComponent("settings.json"))
        // The UserDefaults property list, as corelibs Foundation writes it.
        let suite = "StorableConfigTests-codec-writer-\(UUID().uuidString)"
        let defaultsStore = try #require(UserDefaultsStore(suiteName: suite, saving: .onEveryWrite))
        CodecFixtures.assign(to: CodecFixtureConfig(store: defaultsStore))
        let plist = UserDefaultsStore.propertyListURL(domain: suite)
        try Data(contentsOf: plist).write(to: output.appendingPathComponent("settings.plist"))
        UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
        try? FileManager.default.removeItem(at: plist)
        // The in-memory trees.
        let memory = InMemoryStore()
        CodecFixtures.assign(to: CodecFixtureConfig(store: memory))
        let tagged = StoredValue.dictionary(memory.allValues.mapValues(TaggedStoredValue.tag))
        try Data((tagged.jsonText(pretty: true) + "\n").utf8).write(
            to: output.appendingPathComponent("stored-values.json"))
    }
}
