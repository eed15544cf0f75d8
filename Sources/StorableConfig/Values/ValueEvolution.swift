/// Reads a value stored by another version of its type: a field the stored value lacks (added to the type since)
/// takes the declared default's field, and a field that does not decode (its type changed) falls back alone to
/// the default's field, instead of the whole value falling back to the default.
///
/// It runs only after a plain decoding failed, and only where the default has the field at the same place: a
/// path through an array element or through a key the default does not hold (a dictionary's entry, an enum case
/// the default is not) has nothing to fill from, and the value fails as before. The stored value itself is never
/// changed: the filled value is what the setting reads, and the store is written only when the setting is
/// assigned (Docs/SupportedTypes.md, "When your type changes").
enum ValueEvolution {
    /// A field that was stored but could not be read, and reads the fill's field instead.
    struct FieldFallback {
        /// The field's place in the value, its names joined with dots and its array positions in brackets
        /// (`window.width`, `tabs[2].title`).
        let path: String
        /// What the field holds in the stored value.
        let stored: StoredValue
        /// Why the stored field was not read.
        let reason: String

        /// The key that reports name the field by, under `parent` (a setting's key, or a record's).
        func key(under parent: String) -> String {
            parent + (path.hasPrefix("[") ? "" : ".") + path
        }
    }

    /// Decodes `stored` as `Value`, filling gaps from `defaultForm`, the declared default's stored form (`nil`:
    /// none, as for a record); a nested value whose type is ``FillsNewFields`` fills its own gaps from its fill.
    /// `nil` when a gap has nothing to fill it. The notes say which members the type asked for.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from stored: StoredValue, filling defaultForm: StoredValue?
    ) -> (value: Value, notes: DecodingNotes)? {
        let notes = DecodingNotes()
        let node = NodeDecoder(value: stored, codingPath: [], notes: notes)
        return decode(Value.self, from: node, filling: defaultForm, notes: notes).map { ($0, notes) }
    }

    /// The value that `node` holds, its gaps filled from `fill` (the stored form of a whole `Value`), each place
    /// at most once; `nil` when a gap has nothing to fill it.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from node: NodeDecoder, filling fill: StoredValue?, notes: DecodingNotes
    ) -> Value? {
        var current = node.value
        let base = node.codingPath
        var filled: Set<[String]> = []
        var own: [FieldFallback] = []
        let mark = notes.fallbacks.count
        while true {
            // What nested values filled in a pass that failed is filled again, or not, in the next.
            notes.fallbacks.removeSubrange(mark...)
            let error: DecodingError
            do {
                let value = try Value(from: NodeDecoder(value: current, codingPath: base, notes: notes))
                notes.fallbacks += own
                return value
            } catch let decodingError as DecodingError {
                error = decodingError
            } catch {
                return nil
            }
            guard let fill, let (keys, isMissing, reason) = place(of: error), keys.count > base.count,
                case let path = keys.dropFirst(base.count).map(\.stringValue),
                !keys.dropFirst(base.count).contains(where: isArrayIndex), filled.insert(path).inserted,
                let field = fill.member(at: path), let replaced = current.replacing(at: path, with: field)
            else { return nil }
            if !isMissing, let storedField = current.member(at: path) {
                own.append(FieldFallback(path: describe(keys), stored: storedField, reason: reason))
            }
            current = replaced
        }
    }

    /// The coding keys leading to the field that `error` is about, whether the field is missing (rather than of
    /// another type), and why the field was not read.
    private static func place(of error: DecodingError) -> (keys: [any CodingKey], isMissing: Bool, reason: String)? {
        switch error {
        case .keyNotFound(let key, let context):
            (context.codingPath + [key], true, context.debugDescription)
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            (context.codingPath, false, context.debugDescription)
        @unknown default:
            nil
        }
    }

    /// `keys` as a path: `tabs[2].title`.
    static func describe(_ keys: [any CodingKey]) -> String {
        var path = ""
        for key in keys {
            let name = key.stringValue
            path += isArrayIndex(key) ? "[\(name)]" : (path.isEmpty ? name : "." + name)
        }
        return path
    }

    /// Whether `key` is an array element's position (as the decoder names them), not a member's name.
    private static func isArrayIndex(_ key: any CodingKey) -> Bool {
        key is StoredValueCodingKey && key.intValue != nil
    }

    // MARK: Members this version does not know

    /// The places (member names from the top) of the members that `Value` asks for when it reads `old` and when
    /// it reads `new`, so that ``carrying(_:into:known:)`` keeps the others (fields a newer version added) when
    /// `new` is written over `old`, at every depth of nested objects; nothing is carried inside arrays. A member
    /// the type asks for is known even when `new` leaves it out (an optional set to `nil`), and is not brought
    /// back. An `old` that does not decode as `Value` (even with its gaps filled from `defaultForm`) is replaced
    /// whole. Both values count, because a type may ask for other members depending on what it reads (an enum's
    /// case). `nil` when nothing is to be carried: `old` has no member that `new` lacks, or does not decode as
    /// `Value`. Runs the type's own decoding: call it without holding a lock, and ``carrying(_:into:known:)`` with
    /// the answer.
    static func knownMembers<Value: Decodable>(
        of old: StoredValue, writing new: StoredValue, as type: Value.Type, filling defaultForm: () -> StoredValue?
    ) -> Set<[String]>? {
        guard old.hasMembers(missingFrom: new), let read = decode(Value.self, from: old, filling: defaultForm())
        else { return nil }
        _ = try? Value(from: NodeDecoder(value: new, codingPath: [], notes: read.notes))
        return read.notes.asked
    }

    /// `new` with the members of `old` not in `known` carried over, through dictionaries; `nil` when there are
    /// none.
    static func carrying(_ old: StoredValue, into new: StoredValue, known: Set<[String]>) -> StoredValue? {
        var carried = false
        let merged = merging(old, into: new, at: [], known: known, carried: &carried)
        return carried ? merged : nil
    }

    private static func merging(
        _ old: StoredValue, into new: StoredValue, at path: [String], known: Set<[String]>, carried: inout Bool
    ) -> StoredValue {
        guard case .dictionary(let oldMembers) = old, case .dictionary(var newMembers) = new else { return new }
        for (name, member) in oldMembers {
            let place = path + [name]
            if let newMember = newMembers[name] {
                newMembers[name] = merging(member, into: newMember, at: place, known: known, carried: &carried)
            } else if !known.contains(place) {
                newMembers[name] = member
                carried = true
            }
        }
        return .dictionary(newMembers)
    }
}

/// A type that gives the values of fields added to it since a value was stored, where there is no declared
/// default to take them from: an element of an array, an entry of a dictionary, a record of a collection.
///
/// ```swift
/// struct Tab: Codable, FillsNewFields {
///     var title: String
///     var isPinned = false  // added in version 2
///     static let fillForNewFields = Tab(title: "")
/// }
/// ```
///
/// A stored `Tab` without `isPinned` then reads with `isPinned` false, and a field that does not decode reads
/// the fill's and is reported. A setting of this type fills from its declared default, not from this.
/// Without it, such a value does not decode, as before: see "When your type changes" in
/// Docs/SupportedTypes.md.
public protocol FillsNewFields: Codable {
    /// The value whose fields fill the fields a stored value lacks.
    static var fillForNewFields: Self { get }
}

extension FillsNewFields {
    /// The stored form of ``fillForNewFields``.
    static var encodedFill: StoredValue? { try? StoredValueCoding.encode(fillForNewFields) }
}

extension StoredValue {
    /// Whether this dictionary, or one nested in it through dictionaries, has a member that `other` lacks at the
    /// same place.
    func hasMembers(missingFrom other: StoredValue) -> Bool {
        guard case .dictionary(let members) = self, case .dictionary(let otherMembers) = other else { return false }
        return members.contains { name, member in
            guard let otherMember = otherMembers[name] else { return true }
            return member.hasMembers(missingFrom: otherMember)
        }
    }

    /// The member at `path`, through dictionaries only.
    func member(at path: some Collection<String>) -> StoredValue? {
        guard let first = path.first else { return self }
        guard case .dictionary(let members) = self, let member = members[first] else { return nil }
        return member.member(at: path.dropFirst())
    }

    /// A copy with the member at `path` set to `value`; `nil` where a dictionary on the way is missing.
    fileprivate func replacing(at path: some Collection<String>, with value: StoredValue) -> StoredValue? {
        guard let first = path.first else { return value }
        guard case .dictionary(var members) = self,
            let replaced = path.count == 1 ? value : members[first]?.replacing(at: path.dropFirst(), with: value)
        else { return nil }
        members[first] = replaced
        return .dictionary(members)
    }
}
