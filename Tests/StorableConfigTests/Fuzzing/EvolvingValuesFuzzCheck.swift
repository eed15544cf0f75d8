import Foundation

@testable import StorableConfig

/// The check of the `evolving-values` fuzz target (Fuzz/Targets/EvolvingValuesTarget.swift), also run by
/// `swift test` over its seed corpus and every input that ever failed it: any bytes as the JSON of a stored value
/// (`JSONText.parse`), read by a setting of a struct with nested structs, arrays, a dictionary and enums, whose
/// declared default fills the gaps (Docs/SupportedTypes.md, "When your type changes").
///
/// - Reading never crashes and never changes the store.
/// - A tree that decodes as it is reads exactly as it decodes; one that does not reads the default or a value
///   whose every field the tree holds with the type's own shape is the tree's (the filled value, encoded, keeps
///   each such field of the tree).
/// - What is read, assigned to a fresh config and read back, is the same value.
/// - An older version of the type that assigns over the tree keeps the members it does not know, and the newer
///   version reads them again as it did.
enum EvolvingValuesFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        guard let stored = try? JSONText.parse(input) else { return nil }
        let key = "fuzz.FuzzEvolvingConfig.value"
        let store = InMemoryStore([key: stored])
        let config = FuzzEvolvingConfig(store: store)
        let read = config.value
        if store.value(forKey: key) != stored { return "reading changed the stored value" }
        if let plain = try? StoredValueDecoder().decode(FuzzEvolving.self, from: stored), plain != read {
            return "a tree that decodes as it is reads as another value"
        }
        if read != FuzzEvolvingConfig.declared, case .dictionary(let members) = stored {
            // A top-level field that decodes on its own was kept as it was stored.
            for (name, field) in members where read.holds(field, as: name) == false {
                return "the field \(name) was stored valid but not kept"
            }
        }
        let fresh = InMemoryStore()
        FuzzEvolvingConfig(store: fresh).value = read
        if FuzzEvolvingConfig(store: fresh).value != read { return "the value read does not read back once written" }
        return olderVersionFailure(stored: stored, newerRead: read)
    }

    /// An older version of the type (without `items`, `tags`, `kind`, `shape` and `inner.deeper`) assigns over
    /// `stored`: the members it does not know are kept, and the newer version reads them as it did.
    private static func olderVersionFailure(stored: StoredValue, newerRead: FuzzEvolving) -> String? {
        let key = "fuzz.FuzzEvolvingConfig.value"
        let store = InMemoryStore([key: stored])
        let older = FuzzEvolvingOlderConfig(store: store)
        older.value.name += "!"
        guard let written = store.value(forKey: key) else { return "the older version's assignment wrote nothing" }
        if let read = try? StoredValueDecoder().decode(FuzzEvolvingOlder.self, from: written), read != older.value {
            return "the older version's value does not read back once written"
        }
        let olderDefault = try? StoredValueCoding.encode(FuzzEvolvingOlderConfig.declared)
        guard ValueEvolution.decode(FuzzEvolvingOlder.self, from: stored, filling: olderDefault) != nil,
            case .dictionary(let members) = stored, case .dictionary(let writtenMembers) = written
        else { return nil }
        for name in ["items", "tags", "kind", "shape"] where writtenMembers[name] != members[name] {
            return "the member \(name), unknown to the older version, was not kept"
        }
        if case .dictionary(let inner)? = members["inner"], let deeper = inner["deeper"],
            writtenMembers["inner"]?.member(at: ["deeper"]) != deeper
        {
            return "the member inner.deeper, unknown to the older version, was not kept"
        }
        let again = FuzzEvolvingConfig(store: store).value
        if again.items != newerRead.items || again.tags != newerRead.tags || again.kind != newerRead.kind
            || again.shape != newerRead.shape
        {
            return "the newer version reads what the older one did not know differently after its write"
        }
        return nil
    }
}

/// ``FuzzEvolving`` as an older version had it.
struct FuzzEvolvingOlder: Codable, Sendable, Equatable {
    struct Inner: Codable, Sendable, Equatable {
        var count = 1
        var label = "inner"
    }

    var name = "default"
    var inner = Inner()
    var note: String? = nil
}

/// The older version's config, on the same key.
final class FuzzEvolvingOlderConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "fuzz" }
    override class var configName: String { "FuzzEvolvingConfig" }
    override class var overrides: ConfigOverrides { .none }
    static let declared = FuzzEvolvingOlder(name: "older", inner: .init(count: 3, label: "y"))
    @Setting var value = FuzzEvolvingOlderConfig.declared
}

/// The value type of the `evolving-values` fuzz target.
struct FuzzEvolving: Codable, Sendable, Equatable {
    struct Inner: Codable, Sendable, Equatable {
        var count = 1
        var label = "inner"
        var deeper = Deeper()
    }

    struct Deeper: Codable, Sendable, Equatable {
        var flag = true
        var ratio = 0.5
    }

    enum Kind: String, Codable, Sendable, Equatable {
        case small, large
    }

    enum Shape: Codable, Sendable, Equatable {
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
    }

    var name = "default"
    var inner = Inner()
    var items: [Inner] = [Inner()]
    var tags: [String: Int] = ["a": 1]
    var kind = Kind.small
    var shape = Shape.rectangle(width: 2, height: 3)
    var note: String? = nil

    /// Whether this value's member `name` is `field` decoded on its own; `nil` when `field` does not decode as
    /// that member's type (or there is no such member).
    func holds(_ field: StoredValue, as name: String) -> Bool? {
        func same<Member: Decodable & Equatable>(_ member: Member) -> Bool? {
            (try? StoredValueDecoder().decode(Member.self, from: field)).map { $0 == member }
        }
        switch name {
        case "name": return same(self.name)
        case "inner": return same(inner)
        case "items": return same(items)
        case "tags": return same(tags)
        case "kind": return same(kind)
        case "shape": return same(shape)
        default: return nil
        }
    }
}

/// One setting of ``FuzzEvolving``.
final class FuzzEvolvingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "fuzz" }
    override class var overrides: ConfigOverrides { .none }
    static let declared = FuzzEvolving(name: "declared", inner: .init(count: 7, label: "x", deeper: .init()))
    @Setting var value = FuzzEvolvingConfig.declared
}
