/// The changes a ``RecordCollection`` writes, worked out against the stored dictionary as it is in the store
/// when it is written, so that records changed by others since this instance last read them are not
/// overwritten.
extension RecordCollection {
    enum RecordOperation {
        case put([String: StoredValue])
        case remove([String])
        /// Ordered: remove, and renumber the rest.
        case delete(String)
        /// Ordered: place a record, and renumber.
        case insert(id: String, record: StoredValue, at: Int)
        /// Ordered: move a record, and renumber.
        case move(id: String, to: Int)
    }

    /// Applies `operations` to `entries`, returning the ids whose stored record changed. A record put over a stored
    /// one keeps its members that `known` (by id, from ``knownMembers(for:in:)``) does not list.
    static func apply(
        _ operations: [RecordOperation], to entries: inout [String: StoredValue], orderField: String?,
        known: [String: Set<[String]>]
    ) -> Set<String> {
        func keeping(_ record: StoredValue, over old: StoredValue?, id: String) -> StoredValue {
            guard let old, let fields = known[id] else { return record }
            return ValueEvolution.carrying(old, into: record, known: fields) ?? record
        }
        var touched: Set<String> = []
        for operation in operations {
            switch operation {
            case .put(let records):
                for (id, record) in records {
                    entries[id] = keeping(record, over: entries[id], id: id)
                }
                touched.formUnion(records.keys)
            case .remove(let ids):
                for id in ids where entries.removeValue(forKey: id) != nil { touched.insert(id) }
            case .delete(let id):
                guard entries.removeValue(forKey: id) != nil else { continue }
                touched.insert(id)
                touched.formUnion(renumber(Self.ordered(entries, by: orderField), in: &entries, field: orderField))
            case .insert(let id, let record, let index):
                var sequence = Self.ordered(entries, by: orderField).filter { $0 != id }
                entries[id] = keeping(record, over: entries[id], id: id)
                touched.insert(id)
                sequence.insert(id, at: max(0, min(index, sequence.count)))
                touched.formUnion(renumber(sequence, in: &entries, field: orderField, always: id))
            case .move(let id, let index):
                var sequence = Self.ordered(entries, by: orderField)
                guard let from = sequence.firstIndex(of: id) else { continue }
                sequence.remove(at: from)
                sequence.insert(id, at: max(0, min(index, sequence.count)))
                touched.formUnion(renumber(sequence, in: &entries, field: orderField))
            }
        }
        return touched
    }

    /// For each record that `operations` put over a record of `entries`, the members that this version of
    /// `Record` knows (see ``ValueEvolution/knownMembers(of:writing:as:filling:)``), so that ``apply(_:to:orderField:known:)``
    /// keeps the others. Runs `Record`'s decoding: call it without holding a lock.
    static func knownMembers(
        for operations: [RecordOperation], in entries: ShardedDictionary<StoredValue>
    ) -> [String: Set<[String]>] {
        var known: [String: Set<[String]>] = [:]
        func note(_ id: String, _ record: StoredValue) {
            if let old = entries[id], let fields = knownMembers(of: old, writing: record) { known[id] = fields }
        }
        for operation in operations {
            switch operation {
            case .put(let records): for (id, record) in records { note(id, record) }
            case .insert(let id, let record, _): note(id, record)
            case .remove, .delete, .move: break
            }
        }
        return known
    }

    /// The members of `old` and `record` that this version of `Record` knows; `nil` when nothing is to be kept.
    static func knownMembers(of old: StoredValue, writing record: StoredValue) -> Set<[String]>? {
        ValueEvolution.knownMembers(of: old, writing: record, as: Record.self) {
            (Record.self as? any FillsNewFields.Type)?.encodedFill
        }
    }

    /// Decodes a stored record; one written by another version of `Record` fills the fields it lacks from
    /// ``FillsNewFields/fillForNewFields`` when `Record` (or a type nested in it) adopts it, and `fallbacks`
    /// gets the fields that did not decode.
    static func decodeRecord(
        _ stored: StoredValue, fallbacks: inout [ValueEvolution.FieldFallback]
    ) throws -> Record {
        do {
            return try ValueTraits<Record>.shared.decode(stored)
        } catch {
            let fill = (Record.self as? any FillsNewFields.Type)?.encodedFill
            guard let read = ValueEvolution.decode(Record.self, from: stored, filling: fill) else { throw error }
            fallbacks += read.notes.fallbacks
            return read.value
        }
    }

    /// Ids sorted by the order field of their stored records (records without one last), then by id.
    private static func ordered(_ entries: [String: StoredValue], by field: String?) -> [String] {
        func order(_ id: String) -> Int64 {
            guard let field, case .dictionary(let members)? = entries[id], case .int(let number)? = members[field]
            else { return .max }
            return number
        }
        return entries.keys.sorted { (order($0), $0) < (order($1), $1) }
    }

    /// Sets the order field of each record of `sequence` to its position, changing nothing else in it; returns
    /// the ids whose number changed.
    private static func renumber(
        _ sequence: [String], in entries: inout [String: StoredValue], field: String?, always: String? = nil
    ) -> Set<String> {
        guard let field else { return [] }
        var touched: Set<String> = []
        for (position, id) in sequence.enumerated() {
            guard case .dictionary(var members)? = entries[id] else { continue }
            if members[field] == .int(Int64(position)), id != always { continue }
            members[field] = .int(Int64(position))
            entries[id] = .dictionary(members)
            touched.insert(id)
        }
        return touched
    }

}
