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
    /// A field that was stored but could not be read, and reads the default's field instead.
    struct FieldFallback {
        /// The field's place in the value, its names joined with dots (`window.width`).
        let path: String
        /// What the field holds in the stored value.
        let stored: StoredValue
        /// Why the stored field was not read.
        let reason: String
    }

    /// Decodes `stored` as `Value`, filling gaps from `defaultForm`, the declared default's stored form; `nil` when
    /// a gap has nothing to fill it.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from stored: StoredValue, filling defaultForm: StoredValue
    ) -> (value: Value, fallbacks: [FieldFallback])? {
        var current = stored
        var fallbacks: [FieldFallback] = []
        // Each pass fills one field, and a field is filled at most once.
        var filled: Set<[String]> = []
        while true {
            let error: DecodingError
            do {
                return (try StoredValueDecoder().decode(Value.self, from: current), fallbacks)
            } catch let decodingError as DecodingError {
                error = decodingError
            } catch {
                return nil
            }
            guard let (path, isMissing) = place(of: error), !path.isEmpty, filled.insert(path).inserted,
                let field = defaultForm.member(at: path), let replaced = current.replacing(at: path, with: field)
            else { return nil }
            if !isMissing, let storedField = current.member(at: path) {
                fallbacks.append(
                    FieldFallback(path: path.joined(separator: "."), stored: storedField, reason: reason(error)))
            }
            current = replaced
        }
    }

    /// The names of the members leading to the field that `error` is about, and whether the field is missing
    /// (rather than of another type); `nil` where the path goes through an array element.
    private static func place(of error: DecodingError) -> (path: [String], isMissing: Bool)? {
        let keys: [any CodingKey]
        let isMissing: Bool
        switch error {
        case .keyNotFound(let key, let context):
            keys = context.codingPath + [key]
            isMissing = true
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            keys = context.codingPath
            isMissing = false
        @unknown default:
            return nil
        }
        guard keys.allSatisfy({ $0.intValue == nil }) else { return nil }
        return (keys.map(\.stringValue), isMissing)
    }

    private static func reason(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.debugDescription
        default:
            "\(error)"
        }
    }
}

extension StoredValue {
    /// The member at `path`, through dictionaries only.
    func member(at path: some Collection<String>) -> StoredValue? {
        guard let first = path.first else { return self }
        guard case .dictionary(let members) = self, let member = members[first] else { return nil }
        return member.member(at: path.dropFirst())
    }

    /// A copy with the member at `path` set to `value`; `nil` where a dictionary on the way is missing.
    fileprivate func replacing(at path: some Collection<String>, with value: StoredValue) -> StoredValue? {
        guard let first = path.first else { return value }
        guard case .dictionary(var members) = self else { return nil }
        if path.count == 1 {
            members[first] = value
        } else {
            guard let member = members[first], let replaced = member.replacing(at: path.dropFirst(), with: value)
            else { return nil }
            members[first] = replaced
        }
        return .dictionary(members)
    }
}
