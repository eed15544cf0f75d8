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

    /// Applies `operations` to `entries`, returning the ids whose stored record changed.
    static func apply(_ operations: [RecordOperation], to entries: inout [String: StoredValue], orderField: String?)
        -> Set<String>
    {
        var touched: Set<String> = []
        for operation in operations {
            switch operation {
            case .put(let records):
                for (id, record) in records {
                    entries[id] = entries[id].map { keepingUnknownMembers(of: $0, in: record) } ?? record
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
                entries[id] = entries[id].map { keepingUnknownMembers(of: $0, in: record) } ?? record
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

    /// `record`, about to replace `old`, with the members of `old` that this version of `Record` does not know
    /// (fields a newer version added) carried over (see ``ValueEvolution``).
    static func keepingUnknownMembers(of old: StoredValue, in record: StoredValue) -> StoredValue {
        ValueEvolution.keepingUnknownMembers(of: old, in: record, as: Record.self) {
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
