import Foundation
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

    @Test(arguments: StoreKind.allCases)
    func removeDeletesOnlyTheKeyAndMissingKeysReadNil(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.open()
        try store.setValue(.int(1), forKey: "a")
        try store.setValue(.int(2), forKey: "b")
        try store.removeValue(forKey: "a")
        try store.removeValue(forKey: "never.set")
        #expect(try store.value(forKey: "a") == nil)
        #expect(try store.value(forKey: "b") == .int(2))
        #expect(try store.values(forKeys: ["a", "b", "c"]) == ["b": .int(2)])
    }

    @Test(arguments: StoreKind.allCases)
    func setValuesSetsAndRemovesInOneCall(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.open()
        try store.setValue(.int(1), forKey: "gone")
        try store.setValues(["new": .string("n"), "other": .bool(true)], removingValuesForKeys: ["gone"])
        #expect(try store.values(forKeys: ["gone", "new", "other"]) == ["new": .string("n"), "other": .bool(true)])
        try store.reload()
        #expect(try store.value(forKey: "new") == .string("n"))
    }
}
