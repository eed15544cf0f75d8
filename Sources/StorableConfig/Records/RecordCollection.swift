import Foundation

/// Records stored under one key, by id: upsert, delete, fetch, in a stable order; each change is one write.
///
/// Declare one with ``Records``. Every operation changes only the records it names: it encodes those records,
/// not the others, and writes them with one read-modify-write of the collection's key, which a
/// ``JSONFileStore`` performs under its file lock, so that two processes changing different records of one
/// collection keep both changes.
///
/// ```swift
/// let incomes = budget.incomes
/// let id = incomes.newID()
/// incomes.upsert(Income(id: id, name: "Salary", amount: 300_000, order: 0))
/// incomes[id]?.amount          // 300_000
/// incomes.move(id: id, to: 2)  // `order` stays 0, 1, 2, … with no gaps
/// incomes.delete(id: id)
/// ```
///
/// A stored record that no longer decodes (the type changed) is skipped, reported through
/// ``StorableConfig/errorHandler``, and kept in the store untouched: later writes never drop it.
public final class RecordCollection<Record: Codable & Identifiable & Sendable>: @unchecked Sendable
where Record.ID: LosslessStringConvertible & Sendable {
    // Guarded by `lock`, under which the code only copies and swaps references: decoding, sorting and
    // building dictionaries happen outside it, on a snapshot that replaces the old one whole.
    let lock = Lock()
    private var snapshot = Snapshot(entries: ShardedDictionary(), records: ShardedDictionary(), version: 0)
    var binding: SettingBinding?
    /// Operations whose write failed, applied again before the next one.
    private var pendingOperations: [RecordOperation] = []
    /// The stored name of the order field, found by encoding a record with two different orders.
    private var orderFieldName: String?
    let orderKeyPath: (WritableKeyPath<Record, Int> & Sendable)?
    let declaredKeys: DeclaredKeys
    /// What the records are for, as the declaration says (`@Records(description:)`), or `nil`.
    public let settingDescription: String?

    /// What the collection holds at one version; never changed once published, except for `sorted`, filled in
    /// under the lock on the first read. Sharded, so that the next snapshot copies only what it changes.
    final class Snapshot {
        /// The stored dictionary, id → stored record, including records that do not decode.
        let entries: ShardedDictionary<StoredValue>
        let records: ShardedDictionary<Record>
        let version: UInt64
        var sorted: [Record]?

        init(entries: ShardedDictionary<StoredValue>, records: ShardedDictionary<Record>, version: UInt64) {
            self.entries = entries
            self.records = records
            self.version = version
        }
    }

    init(
        orderKeyPath: (WritableKeyPath<Record, Int> & Sendable)?, declaredKeys: DeclaredKeys = .derived,
        description: String? = nil
    ) {
        self.orderKeyPath = orderKeyPath
        self.declaredKeys = declaredKeys
        settingDescription = description
    }

    var current: Snapshot { lock.withLock { snapshot } }

    // MARK: Reading

    /// Every record that decodes, ordered by the collection's order field (if it has one), then by id.
    public var all: [Record] {
        recordAccess()
        let current = current
        if let sorted = lock.withLock({ current.sorted }) { return sorted }
        let order = { (record: Record) in self.orderKeyPath.map { record[keyPath: $0] } ?? 0 }
        let sorted = current.records.values.sorted { (order($0), $0.id.description) < (order($1), $1.id.description) }
        lock.withLock {
            if current.sorted == nil { current.sorted = sorted }
        }
        return sorted
    }

    /// How many records decode.
    public var count: Int {
        recordAccess()
        return current.records.count
    }

    /// The record with `id`, or `nil`.
    public subscript(id: Record.ID) -> Record? {
        record(id: id)
    }

    /// The record with `id`, or `nil`.
    public func record(id: Record.ID) -> Record? {
        recordAccess()
        return current.records[id.description]
    }

    /// The key under which the collection is stored.
    public var key: String {
        lock.withLock { binding }?.key ?? ""
    }

    /// A new, unique id: a UUID, so that no coordination is needed between instances or processes, and an id
    /// is never issued twice, deleted or not.
    public func newID() -> String {
        UUID().uuidString
    }

    // MARK: Writing

    /// Adds `record`, or replaces the record with its id, as given: in an ordered collection its order field is
    /// stored as it is (use ``insert(_:at:)`` to place a record and renumber the others). One write.
    public func upsert(_ record: Record) {
        upsert(contentsOf: CollectionOfOne(record))
    }

    /// Adds or replaces each of `records`, as given. One write.
    public func upsert(contentsOf records: some Sequence<Record>) {
        var put: [String: StoredValue] = [:]
        for record in records {
            guard let stored = encode(record) else { return }
            put[record.id.description] = stored
        }
        perform(.put(put))
    }

    /// Removes the record with `id`; in an ordered collection, renumbers the records after it. One write.
    public func delete(id: Record.ID) {
        perform(orderKeyPath == nil ? .remove([id.description]) : .delete(id.description))
    }

    /// Removes every record that decodes (records that do not are kept). One write.
    public func removeAll() {
        perform(.remove(current.records.keys))
    }

    /// Inserts `record` at `index` of ``all`` in an ordered collection, renumbering the records after it; in
    /// an unordered one, upserts it. One write.
    public func insert(_ record: Record, at index: Int) {
        guard orderKeyPath != nil else { return upsert(record) }
        guard let stored = encode(record) else { return }
        perform(.insert(id: record.id.description, record: stored, at: index))
    }

    /// Moves the record with `id` to `index` of ``all`` in an ordered collection, renumbering the records in
    /// between. One write; nothing happens if there is no such record or the collection is unordered.
    public func move(id: Record.ID, to index: Int) {
        guard orderKeyPath != nil else { return }
        perform(.move(id: id.description, to: index))
    }

    /// Removes the stored collection, records that do not decode included.
    public func reset() {
        guard let binding = lock.withLock({ binding }) else { return }
        let old = binding.context.hasChangeObservers ? all : []
        let version = binding.context.write([SettingChange(key: binding.key, stored: nil, typedValue: nil)])
        take(entries: [:], version: version, changedKeys: nil)
        announce(old: old, binding: binding)
    }

    // MARK: Internals

    func encode(_ record: Record) -> StoredValue? {
        do {
            let stored = try ValueTraits<Record>.shared.encode(record)
            if let orderKeyPath, lock.withLock({ orderFieldName }) == nil {
                var other = record
                other[keyPath: orderKeyPath] = record[keyPath: orderKeyPath] &+ 1
                if case .dictionary(let first) = stored,
                    case .dictionary(let second)? = try? ValueTraits<Record>.shared.encode(other),
                    let name = first.keys.first(where: { first[$0] != second[$0] })
                {
                    var replaced: String? = name  // the old value is released after the unlock
                    lock.withLock { swap(&orderFieldName, &replaced) }
                }
            }
            return stored
        } catch {
            StorableConfig.report(.encodingFailed(key: key, reason: "record \(record.id): \(error)"))
            return nil
        }
    }

    /// Writes `operation` (after any that failed before) as one read-modify-write of the stored dictionary;
    /// a stored value that is not a dictionary of records is reported, and left as it is.
    func perform(_ operation: RecordOperation) {
        do {
            try perform([operation])
        } catch {
            StorableConfig.report(error)
        }
    }

    /// Writes `operations` (after any that failed before) as one read-modify-write of the stored dictionary.
    /// - Throws: ``StorableConfigError/typeMismatch(key:expectedType:found:reason:foundText:)`` if the stored
    ///   value is not a dictionary of records: nothing is written.
    func perform(_ operations: [RecordOperation]) throws(StorableConfigError) {
        if orderKeyPath != nil, lock.withLock({ orderFieldName == nil }), let sample = current.records.anyValue {
            _ = encode(sample)  // finds the order field's stored name
        }
        let (binding, pending, orderField) = lock.withLock { (self.binding, pendingOperations, orderFieldName) }
        let operations = pending + operations
        // Worked out here, outside the store's lock: the record type's decoding is its own code.
        let known = Self.knownMembers(for: operations, in: current.entries)
        guard let binding else {
            // A collection outside a config: memory only.
            var entries = current.entries.dictionary
            let touched = Self.apply(operations, to: &entries, orderField: orderField, known: known)
            take(entries: entries, version: nil, changedKeys: touched)
            return
        }
        // The old records are only needed if a config-wide observer will be told of the change.
        let old = binding.context.hasChangeObservers ? all : []
        let key = binding.key
        var touched: Set<String> = []
        var storedCount = 0
        do {
            let result = try binding.context.hub.update(
                key: key,
                { current in
                    var entries: [String: StoredValue] = [:]
                    switch current {
                    case nil: break
                    case .dictionary(let members)?: entries = members
                    case let other?:
                        throw StorableConfigError.typeMismatch(
                            key: key, expectedType: "dictionary of records", found: other,
                            reason: "it is \(other.kindDescription); nothing was changed, and only a reset replaces it")
                    }
                    storedCount = entries.count
                    touched = Self.apply(operations, to: &entries, orderField: orderField, known: known)
                    return entries.isEmpty ? nil : .dictionary(entries)
                }, in: binding.context.store, from: ObjectIdentifier(binding.context), oneAtATime: true)
            var kept = result.failed ? operations : []  // the old value is released after the unlock
            lock.withLock { swap(&pendingOperations, &kept) }
            var updatedEntries: [String: StoredValue] = [:]
            if case .dictionary(let members)? = result.value { updatedEntries = members }
            // Others' changes made since the last load show as a different count; then compare every record.
            let knownCount = current.entries.count
            take(
                entries: updatedEntries, version: result.version, changedKeys: storedCount == knownCount ? touched : nil
            )
        } catch {
            throw error as? StorableConfigError ?? .writeFailed(key: key, reason: "\(error)")
        }
        announce(old: old, binding: binding)
    }

    /// Takes a new stored dictionary, decoding only the records in `changedKeys` (all that differ when nil).
    /// The new snapshot is built outside the lock and swapped in if no one swapped meanwhile (else built
    /// again); an older version never replaces a newer one.
    /// - Returns: Whether any record changed.
    @discardableResult
    func take(entries newEntries: [String: StoredValue], version newVersion: UInt64?, changedKeys: Set<String>?)
        -> Bool
    {
        while true {
            let current = current
            if let newVersion, newVersion < current.version { return false }
            var entries = current.entries
            var records = current.records
            let keysToDecode: [String]
            if let changedKeys {
                // Take only these records: `entries` must keep describing what `records` holds, so that a later
                // comparison still finds records that others changed meanwhile.
                keysToDecode = Array(changedKeys)
                for id in changedKeys { entries[id] = newEntries[id] }
            } else {
                keysToDecode = Array(Set(newEntries.keys).union(entries.keys).filter { newEntries[$0] != entries[$0] })
                entries = ShardedDictionary(newEntries)
            }
            var undecodable: [(String, StoredValue, String)] = []
            var fallbacks: [(String, ValueEvolution.FieldFallback)] = []
            for id in keysToDecode {
                guard let stored = newEntries[id] else {
                    records[id] = nil
                    continue
                }
                do {
                    var filled: [ValueEvolution.FieldFallback] = []
                    records[id] = try Self.decodeRecord(stored, fallbacks: &filled)
                    fallbacks += filled.map { (id, $0) }
                } catch {
                    records[id] = nil
                    undecodable.append((id, stored, "\(error)"))
                }
            }
            let next = Snapshot(entries: entries, records: records, version: newVersion ?? current.version)
            // `current` keeps the replaced snapshot alive until after the unlock.
            let swapped = lock.withLock { () -> Bool in
                guard snapshot === current else { return false }
                snapshot = next
                return true
            }
            guard swapped else { continue }
            let key = key
            for (id, stored, reason) in undecodable {
                StorableConfig.report(
                    .typeMismatch(
                        key: "\(key)[\(id)]", expectedType: ValueTraits<Record>.shared.typeName, found: stored,
                        reason: StorableConfigError.clause(reason) + "; the record is skipped and kept in the store"))
            }
            for (id, fallback) in fallbacks {
                StorableConfig.report(
                    .invalidValue(
                        key: fallback.key(under: "\(key)[\(id)]"),
                        value: "\(fallback.stored)",
                        reason: "\(fallback.reason) The field reads the value for new fields, and the stored record is "
                            + "left in place"))
            }
            return !keysToDecode.isEmpty
        }
    }

    /// Tells observers that the collection changed.
    func announce(old: [Record], binding: SettingBinding) {
        binding.observationDidChange()
        if binding.context.hasChangeObservers {
            binding.context.tellWillChangeObservers()
            binding.context.tellChangeObservers(
                ConfigChange(
                    name: binding.name, key: binding.key, oldValue: old, newValue: all, isSecret: false,
                    origin: binding.context.store.origin(forKey: binding.context.hub.storeKey(binding.key))))
        }
    }

    private func recordAccess() {
        if let binding = lock.withLock({ binding }) { binding.recordAccess() }
    }
}
