import Foundation
import Testing

@testable import StorableConfig

/// The one-pass coder's own promises, beyond reading what the earlier codec wrote (CodecFixtureTests).
struct StoredValueCoderTests {
    struct Ledger: Codable, Equatable, Sendable {
        var total: Decimal
        var entries: [Decimal]
    }

    final class DecimalConfig: StorableConfig, @unchecked Sendable {
        override class var namespace: String { "coder" }
        @Setting var ledger = Ledger(total: 0, entries: [])
        @Setting var rate = Decimal(0)
    }

    static let manyDigits = Decimal(string: "3.1415926535897932384626433832795028841")!

    @Test(arguments: StoreKind.allCases)
    func aDecimalKeepsEveryDigitAfterARelaunch(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let config = DecimalConfig(store: fixture.open())
            config.ledger = Ledger(total: Self.manyDigits, entries: [Decimal(string: "0.1")!, -Self.manyDigits])
            config.rate = Decimal(string: "12345678901234567890.123456789")!
        }
        let config = DecimalConfig(store: fixture.open())
        #expect(config.ledger == Ledger(total: Self.manyDigits, entries: [Decimal(string: "0.1")!, -Self.manyDigits]))
        #expect(config.rate == Decimal(string: "12345678901234567890.123456789")!)
    }

    @Test func aDecimalADoubleHoldsIsStillANumber() throws {
        #expect(
            try StoredValueEncoder().encode(Ledger(total: Decimal(string: "12.5")!, entries: [100]))
                == .dictionary(["total": .double(12.5), "entries": .array([.int(100)])]))
        #expect(
            try StoredValueEncoder().encode(Ledger(total: Self.manyDigits, entries: []))
                == .dictionary(["total": .string("3.1415926535897932384626433832795028841"), "entries": .array([])]))
    }

    struct Counts: Codable, Equatable {
        var small: Int8
        var whole: Int
    }

    @Test func numbersConvertOnlyWhenExact() throws {
        let decoder = StoredValueDecoder()
        #expect(
            try decoder.decode(Counts.self, from: .dictionary(["small": .int(-8), "whole": .double(3)]))
                == Counts(small: -8, whole: 3))
        #expect(throws: DecodingError.self) {
            try decoder.decode(Counts.self, from: .dictionary(["small": .int(300), "whole": .int(1)]))
        }
        #expect(throws: DecodingError.self) {
            try decoder.decode(Counts.self, from: .dictionary(["small": .int(1), "whole": .double(2.5)]))
        }
    }

    @Test func aMismatchNamesThePathWhereItIs() throws {
        let stored = StoredValue.dictionary(["small": .int(1), "whole": .string("three")])
        #expect {
            try StoredValueCoding.decodeCodable(Counts.self, from: stored)
        } throws: { error in
            "\(error)".contains("whole") && "\(error)".contains("a string")
        }
    }

    class Animal: Codable {
        var name = ""
    }

    final class Dog: Animal, @unchecked Sendable {
        var tricks: [String] = []

        private enum CodingKeys: String, CodingKey { case tricks }

        override init() { super.init() }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            tricks = try container.decode([String].self, forKey: .tricks)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(tricks, forKey: .tricks)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func aSubclassEncodesItsSuperclassUnderSuper() throws {
        let dog = Dog()
        dog.name = "Rex"
        dog.tricks = ["sit"]
        let stored = try StoredValueEncoder().encode(dog)
        #expect(
            stored == .dictionary(["tricks": .array([.string("sit")]), "super": .dictionary(["name": .string("Rex")])]))
        let decoded = try StoredValueDecoder().decode(Dog.self, from: stored)
        #expect(decoded.name == "Rex" && decoded.tricks == ["sit"])
    }
}

/// The encoder's short paths (members written in place, strings, numbers and arrays of them without an encoder
/// of their own, nested containers collected at the end, coding paths made on demand) give the tree that
/// JSONEncoder's text gives.
struct StoredValueEncoderShapeTests {
    struct Inner: Codable, Equatable {
        var values: [Double] = [1, 2.5]
        var counts: [Int] = [3, 4]
        var flags: [Bool] = [true]
        var note: String? = nil
    }

    /// Hand-written containers of every kind, a member written twice, and a superclass-style encoder.
    struct Handmade: Encodable {
        enum Key: String, CodingKey { case a, b, list, nested, again }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: .a)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: .nested)
            try nested.encode("deep", forKey: .a)
            try nested.encode([Inner()], forKey: .list)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode(Inner())
            var row = list.nestedUnkeyedContainer()
            try row.encode(1.5)
            try row.encode("x")
            try Inner().encode(to: list.superEncoder())
            try container.encode(2, forKey: .a)
            var again = container.nestedContainer(keyedBy: Key.self, forKey: .again)
            try again.encode("later", forKey: .a)
            try Inner().encode(to: container.superEncoder(forKey: .b))
        }
    }

    struct Failing: Encodable {
        struct Failure: Error {}
        struct Leaf: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(
                    0, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "no"))
            }
        }
        enum Key: String, CodingKey { case outer }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode([[Leaf()]], forKey: .outer)
        }
    }

    @Test func theTreeIsWhatJSONEncoderTextGives() throws {
        let handmade = Handmade()
        #expect(try StoredValueEncoder().encode(handmade) == JSONText.parse(JSONEncoder().encode(handmade)))
        let inner = Inner(note: "n")
        #expect(try StoredValueEncoder().encode(inner) == JSONText.parse(JSONEncoder().encode(inner)))
    }

    @Test func aNestedEncoderSeesItsFullCodingPath() {
        #expect {
            try StoredValueEncoder().encode(Failing())
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["outer", "0", "0"]
        }
    }
}
