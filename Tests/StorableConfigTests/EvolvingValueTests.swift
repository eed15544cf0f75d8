import Foundation
import StorableConfig
import Testing

// Two versions of one program's settings: the same keys (`evolving.Added.…`), the value types of version 1 and
// of version 2, which added fields, nested ones too.

struct WindowV1: Codable, Sendable, Equatable {
    var width = 800.0
    var height = 600.0
    var size = SizeV1()
}

struct SizeV1: Codable, Sendable, Equatable {
    var columns = 80
}

struct WindowV2: Codable, Sendable, Equatable {
    var width = 800.0
    var height = 600.0
    var size = SizeV2()
    var isFullScreen = true
}

struct SizeV2: Codable, Sendable, Equatable {
    var columns = 80
    var rows = 24
}

/// An enum whose cases carry different fields: a payload is never filled from another case.
enum PanelLayout: Codable, Sendable, Equatable {
    case simple(level: Int)
    case advanced(level: Int, extra: String)
}

class EvolvingConfig: StorableConfig {
    override class var namespace: String { "evolving" }
}

// One pair of classes a test, so that tests running at once never share a key.
final class AddedV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Added" }
    @Setting var window = WindowV1()
}

final class AddedV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Added" }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

final class MismatchV2: EvolvingConfig, @unchecked Sendable {
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

final class NestedV2: EvolvingConfig, @unchecked Sendable {
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

final class AssignedV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Assigned" }
    @Setting var window = WindowV1()
}

final class AssignedV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Assigned" }
    @Setting var window = WindowV2()
}

final class LayoutV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Layouts" }
    @Setting var layout = PanelLayout.simple(level: 1)
}

final class LayoutV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Layouts" }
    @Setting var layout = PanelLayout.advanced(level: 2, extra: "default")
}

final class ArraysV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Arrays" }
    @Setting var windows: [WindowV1] = []
}

final class ArraysV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Arrays" }
    @Setting var windows: [WindowV2] = []
}

final class SecretWindowV2: EvolvingConfig, @unchecked Sendable {
    @Setting(secret: true) var window = WindowV2()
}

/// A config whose JSON source gives some fields of a struct.
final class SourcedWindow: EvolvingConfig, @unchecked Sendable {
    static let path = FileManager.default.temporaryDirectory.appendingPathComponent("evolving-\(UUID()).json").path
    override class var sources: ConfigSources { ConfigSources(aboveStore: [.jsonFile(path, optional: true)]) }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

final class ParsedV2: EvolvingConfig, @unchecked Sendable {
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A config whose launch argument gives some fields of a struct.
final class OverriddenWindow: EvolvingConfig, @unchecked Sendable {
    override class var overrides: ConfigOverrides {
        .arguments(["program", "--overridden-window-window", #"{"width": 5}"#])
    }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A config whose launch argument gives one field of a struct: the others come from the stored value.
final class PartlyOverriddenWindow: EvolvingConfig, @unchecked Sendable {
    override class var overrides: ConfigOverrides {
        .arguments(["program", "--partly-overridden-window-window", #"{"width": 5}"#])
    }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// Another program on the same key, without the argument.
final class PartlyOverriddenWindowWriter: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "PartlyOverriddenWindow" }
    override class var overrides: ConfigOverrides { .none }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A config whose JSON source above the store gives some fields of a struct, over a stored value.
final class SourcedOverStored: EvolvingConfig, @unchecked Sendable {
    static let path = FileManager.default.temporaryDirectory.appendingPathComponent("evolving-\(UUID()).json").path
    override class var sources: ConfigSources { ConfigSources(aboveStore: [.jsonFile(path, optional: true)]) }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A launch argument that gives one field, on a setting whose check the stored height would fail with it.
final class CheckedPartlyOverridden: EvolvingConfig, @unchecked Sendable {
    override class var overrides: ConfigOverrides {
        .arguments(["program", "--checked-partly-overridden-window", #"{"width": 5}"#])
    }
    @Setting(validate: { $0.width < 50 && $0.height > 600 ? "too tall for its width" : nil })
    var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A config whose JSON source above the store gives some fields, and a source below it others.
final class SourcedOverSource: EvolvingConfig, @unchecked Sendable {
    static let above = FileManager.default.temporaryDirectory.appendingPathComponent("evolving-\(UUID()).json").path
    static let below = FileManager.default.temporaryDirectory.appendingPathComponent("evolving-\(UUID()).json").path
    override class var sources: ConfigSources {
        ConfigSources(aboveStore: [.jsonFile(above, optional: true)], belowStore: [.jsonFile(below, optional: true)])
    }
    @Setting var window = WindowV2(width: 640, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true)
}

/// A value type that counts how often it is decoded.
struct CountedDecoding: Codable, Sendable, Equatable {
    static let decodings = DecodingCount()
    var name = ""

    init(name: String) {
        self.name = name
    }

    init(from decoder: any Decoder) throws {
        Self.decodings.add()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
    }
}

final class CountedConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "evolving" }
    @Setting var counted = CountedDecoding(name: "default")
}

/// How often `CountedDecoding` was decoded.
final class DecodingCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

@Suite struct EvolvingValueTests {
    @Test(arguments: StoreKind.allCases)
    func aFieldAddedToTheTypeReadsTheDefaultsFieldWhileTheStoredFieldsKeepTheirValues(_ kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        do {
            let older = AddedV1(store: fixture.open())
            older.window = WindowV1(width: 1024, height: 768, size: SizeV1(columns: 132))
        }
        let storedByVersion1 = try fixture.open().value(forKey: "evolving.Added.window")
        let newer = AddedV2(store: fixture.open())
        // The user's width, height and columns; the added fields as the declared default has them.
        #expect(
            newer.window == WindowV2(width: 1024, height: 768, size: SizeV2(columns: 132, rows: 30), isFullScreen: true)
        )
        #expect(newer.$window.isSet)
        // A missing field is filled silently, and reading never rewrites the store.
        #expect(ReportedErrors.mentioning("evolving.Added.window").isEmpty)
        #expect(try fixture.open().value(forKey: "evolving.Added.window") == storedByVersion1)
    }

    @Test(arguments: StoreKind.allCases)
    func aFieldOfAnotherTypeFallsBackAloneAndIsReportedByItsPath(_ kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        // A text unique to this case: the three kinds run at once, on one key.
        let wide = "wide-\(kind)"
        let stored = StoredValue.dictionary([
            "width": .string(wide), "height": .int(600), "size": .dictionary(["columns": .int(90), "rows": .int(40)]),
            "isFullScreen": .bool(false),
        ])
        try fixture.open().setValue(stored, forKey: "evolving.MismatchV2.window")
        let config = MismatchV2(store: fixture.open())
        #expect(
            config.window == WindowV2(width: 640, height: 600, size: SizeV2(columns: 90, rows: 40), isFullScreen: false)
        )
        let reports = ReportedErrors.mentioning(wide)
        #expect(reports.count == 1)
        #expect(reports.first?.description.contains("'evolving.MismatchV2.window.width'") == true)
        // Only the field is reported, and the stored value is left as it was.
        #expect(ReportedErrors.mentioning("evolving.MismatchV2.window.height").isEmpty)
        #expect(try fixture.open().value(forKey: "evolving.MismatchV2.window") == stored)
    }

    @Test func theFieldOfASecretIsReportedWithoutItsValue() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        store.setValue(
            .dictionary(["width": .string("hunter2"), "height": .int(2)]), forKey: "evolving.SecretWindowV2.window")
        let config = SecretWindowV2(store: store)
        #expect(config.window == WindowV2(width: 800, height: 2))
        let reports = ReportedErrors.mentioning("evolving.SecretWindowV2.window.width").map(\.description)
        #expect(reports.count == 1 && reports.allSatisfy { !$0.contains("hunter2") && $0.contains("<redacted>") })
    }

    @Test func aNestedFieldOfAnotherTypeFallsBackAlone() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        store.setValue(
            .dictionary(["width": .int(1), "height": .int(2), "size": .dictionary(["columns": .bool(true)])]),
            forKey: "evolving.NestedV2.window")
        let config = NestedV2(store: store)
        #expect(
            config.window == WindowV2(width: 1, height: 2, size: SizeV2(columns: 100, rows: 30), isFullScreen: true))
        #expect(ReportedErrors.mentioning("evolving.NestedV2.window.size.columns").count == 1)
    }

    @Test func assigningWritesEveryFieldOfTheCurrentType() throws {
        let store = InMemoryStore()
        AssignedV1(store: store).window = WindowV1(width: 1, height: 2, size: SizeV1(columns: 3))
        let config = AssignedV2(store: store)
        config.window.isFullScreen = false
        guard case .dictionary(let written) = store.value(forKey: "evolving.Assigned.window"),
            case .dictionary(let size) = written["size"]
        else {
            Issue.record("the value written is not a dictionary with a size")
            return
        }
        #expect(Set(written.keys) == ["width", "height", "size", "isFullScreen"])
        #expect(Set(size.keys) == ["columns", "rows"])
        #expect(
            AssignedV2(store: store).window
                == WindowV2(width: 1, height: 2, size: SizeV2(columns: 3, rows: 24), isFullScreen: false))
    }

    @Test func anEnumPayloadIsNeverFilledFromAnotherCase() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        // Case `advanced` without its `extra`: the default is `advanced` too, so `extra` is the default's.
        store.setValue(
            .dictionary(["advanced": .dictionary(["level": .int(7)])]), forKey: "evolving.Layouts.layout")
        #expect(LayoutV2(store: store).layout == .advanced(level: 7, extra: "default"))
        // Version 1's default is `simple`: nothing of it goes into `advanced`, and the setting reads its default
        // and reports the value, as before.
        #expect(LayoutV1(store: store).layout == .simple(level: 1))
        #expect(!ReportedErrors.mentioning("evolving.Layouts.layout").isEmpty)
        #expect(
            store.value(forKey: "evolving.Layouts.layout")
                == .dictionary(["advanced": .dictionary(["level": .int(7)])]))
    }

    @Test func anArrayElementHasNoDefaultToFillFromAndTheStoredValueIsKept() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        ArraysV1(store: store).windows = [WindowV1(width: 5, height: 6)]
        let stored = store.value(forKey: "evolving.Arrays.windows")
        let config = ArraysV2(store: store)
        #expect(config.windows == [])
        #expect(!ReportedErrors.mentioning("evolving.Arrays.windows").isEmpty)
        #expect(store.value(forKey: "evolving.Arrays.windows") == stored)
    }

    @Test func aJSONSourceThatGivesSomeFieldsOfAStructTakesTheRestFromTheDefault() throws {
        defer { try? FileManager.default.removeItem(atPath: SourcedWindow.path) }
        try #"{"evolving.SourcedWindow.window": {"width": 5, "size": {"rows": 9}}}"#.write(
            toFile: SourcedWindow.path, atomically: true, encoding: .utf8)
        let config = SourcedWindow(store: InMemoryStore())
        #expect(
            config.window == WindowV2(width: 5, height: 480, size: SizeV2(columns: 100, rows: 9), isFullScreen: true))
        #expect(config.$window.layer == .file)
    }

    @Test func anOverrideOrATextThatGivesSomeFieldsTakesTheRestFromTheDefault() throws {
        let config = OverriddenWindow(store: InMemoryStore())
        #expect(
            config.window == WindowV2(width: 5, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true))
        #expect(config.$window.layer == .argument)
        // Text assigned as the demo's `set` does: the fields left out are the declared default's.
        let assigned = ParsedV2(store: InMemoryStore())
        try assigned.$window.assign(parsing: #"{"height": 7, "size": {"columns": 1}}"#)
        #expect(
            assigned.window == WindowV2(width: 640, height: 7, size: SizeV2(columns: 1, rows: 30), isFullScreen: true))
        // A field given with another type makes the text invalid.
        #expect(throws: StorableConfigError.self) { try assigned.$window.assign(parsing: #"{"height": "tall"}"#) }
        #expect(assigned.window.height == 7)
    }

    @Test func aLaunchArgumentThatGivesSomeFieldsTakesTheOthersFromTheStoredValueAsItChanges() throws {
        let store = InMemoryStore()
        let stored = WindowV2(width: 1, height: 2, size: SizeV2(columns: 3, rows: 4), isFullScreen: false)
        PartlyOverriddenWindowWriter(store: store).window = stored
        let config = PartlyOverriddenWindow(store: store)
        #expect(config.window == WindowV2(width: 5, height: 2, size: SizeV2(columns: 3, rows: 4), isFullScreen: false))
        #expect(config.$window.layer == .argument)
        // Its own assignment is stored, and read under the argument's field.
        config.window = WindowV2(width: 7, height: 9, size: SizeV2(columns: 3, rows: 4), isFullScreen: false)
        #expect(config.window.width == 5 && config.window.height == 9)
        // So is another program's.
        PartlyOverriddenWindowWriter(store: store).window.height = 11
        #expect(config.window == WindowV2(width: 5, height: 11, size: SizeV2(columns: 3, rows: 4), isFullScreen: false))
        // Nothing stored: the others are the declared default's.
        config.$window.reset()
        #expect(
            config.window == WindowV2(width: 5, height: 480, size: SizeV2(columns: 100, rows: 30), isFullScreen: true))
    }

    @Test func aPartialOverrideFilledFromTheStoreThatFailsTheCheckReadsTheOverrideFilledFromTheDefault() throws {
        let store = InMemoryStore()
        store.setValue(
            .dictionary(["width": .int(100), "height": .int(900), "size": .dictionary([:])]),
            forKey: "evolving.CheckedPartlyOverridden.window")
        // Width 5 with the stored height 900 fails the check: the argument over the declared default is read.
        let config = CheckedPartlyOverridden(store: store)
        #expect(config.window.width == 5)
        #expect(config.window.height == 480)
    }

    @Test func aJSONSourceThatGivesSomeFieldsTakesTheOthersFromTheStoredValue() throws {
        defer { try? FileManager.default.removeItem(atPath: SourcedOverStored.path) }
        try #"{"evolving.SourcedOverStored.window": {"size": {"rows": 9}}}"#.write(
            toFile: SourcedOverStored.path, atomically: true, encoding: .utf8)
        let store = InMemoryStore()
        store.setValue(
            .dictionary([
                "width": .int(1), "height": .int(2), "size": .dictionary(["columns": .int(3), "rows": .int(4)]),
                "isFullScreen": .bool(false),
            ]), forKey: "evolving.SourcedOverStored.window")
        let config = SourcedOverStored(store: store)
        #expect(config.window == WindowV2(width: 1, height: 2, size: SizeV2(columns: 3, rows: 9), isFullScreen: false))
        #expect(config.$window.layer == .file)
    }

    @Test func aSourceAboveTheStoreThatGivesSomeFieldsTakesTheOthersFromASourceBelowWhenNothingIsStored() throws {
        defer {
            try? FileManager.default.removeItem(atPath: SourcedOverSource.above)
            try? FileManager.default.removeItem(atPath: SourcedOverSource.below)
        }
        try #"{"evolving.SourcedOverSource.window": {"width": 5}}"#.write(
            toFile: SourcedOverSource.above, atomically: true, encoding: .utf8)
        try #"{"evolving.SourcedOverSource.window": {"width": 1, "height": 2, "size": {"columns": 3, "rows": 4}}}"#
            .write(toFile: SourcedOverSource.below, atomically: true, encoding: .utf8)
        let config = SourcedOverSource(store: InMemoryStore())
        #expect(config.window == WindowV2(width: 5, height: 2, size: SizeV2(columns: 3, rows: 4), isFullScreen: true))
    }

    @Test func aValueThatMatchesItsTypeIsDecodedOnce() throws {
        // The class's first instance checks that its declared default reads back: made beforehand.
        _ = CountedConfig(store: InMemoryStore())
        let store = InMemoryStore()
        store.setValue(.dictionary(["name": .string("stored")]), forKey: "evolving.CountedConfig.counted")
        let before = CountedDecoding.decodings.value
        let config = CountedConfig(store: store)
        #expect(config.counted == CountedDecoding(name: "stored"))
        #expect(CountedDecoding.decodings.value - before == 1)
    }
}
