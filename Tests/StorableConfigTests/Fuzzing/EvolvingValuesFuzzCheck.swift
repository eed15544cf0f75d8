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
        return nil
    }
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
