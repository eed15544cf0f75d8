import Foundation

/// How a record collection takes part in a config: bound to its key, loaded from the store, listed as a setting.
extension RecordCollection: SettingBox {
    func bind(schema: ConfigSchema, index: Int, context: ConfigContext) {
        let binding = SettingBinding(context: context, schema: schema, index: index)
        lock.withLock { self.binding = binding }
    }

    func endObservation() {}

    func declarationProblem() -> String? { nil }

    var isBool: Bool { false }

    var valueTraits: SchemaTraits? { nil }

    /// Record collections take no values from overrides or file sources.
    func takeLayers(
        above: [OverrideCandidate], below: [OverrideCandidate]?, isFirstLoad: Bool, generation: UInt64
    ) -> LayerOutcome {
        LayerOutcome()
    }

    func prepareForLayers(hasLayerBelow: Bool) {}

    var overrideOrigin: String? { nil }

    func readProblem(_ stored: StoredValue) -> String? {
        if case .dictionary = stored { return nil }
        return "it is \(stored.kindDescription), not a dictionary of records"
    }

    func knownMembers(of old: StoredValue, writing new: StoredValue) -> Set<[String]>? {
        guard case .dictionary(let oldRecords) = old, case .dictionary(let newRecords) = new else { return nil }
        // Every record is known (one the new dictionary leaves out is removed); inside a record, its fields.
        var known = Set(oldRecords.keys.map { [$0] })
        for (id, record) in newRecords {
            guard let oldRecord = oldRecords[id], let fields = Self.knownMembers(of: oldRecord, writing: record)
            else { continue }
            known.formUnion(fields.map { [id] + $0 })
        }
        return known
    }

    var isRecordCollection: Bool { true }

    func showPendingReset() -> UInt64 { 0 }

    func endShowing(_ number: UInt64) {}

    func load(
        _ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64, isFirstLoad: Bool
    ) -> (() -> Void)? {
        let binding = lock.withLock { () -> SettingBinding? in self.binding }
        let old = binding?.context.hasChangeObservers == true ? all : []
        var entries: [String: StoredValue] = [:]
        switch stored {
        case nil: break
        case .dictionary(let members)?: entries = members
        case let other? where isFirstLoad:
            StorableConfig.report(
                .typeMismatch(
                    key: key, expectedType: "dictionary of records", found: other,
                    reason: "it is \(other.kindDescription); the collection reads as empty and the value is kept"))
        case let other?:
            // After the first load, an outside mistake does not empty a running program's collection.
            StorableConfig.report(
                .invalidValue(
                    key: key, value: "\(other)",
                    reason: "it is \(other.kindDescription), not a dictionary of records; the collection keeps its "
                        + "records, and the stored value is left in place"))
            return nil
        }
        guard take(entries: entries, version: version, changedKeys: nil), let binding else { return nil }
        return { [self] in announce(old: old, binding: binding) }
    }
}

extension RecordCollection: AnySetting {
    /// The name of the property that declares the collection.
    public var name: String { lock.withLock { binding }?.name ?? "" }
    /// The keys under which the collection may have been stored before, in search order.
    public var previousKeys: [String] { lock.withLock { binding }.map { $0.schema.earlierKeys[$0.index] } ?? [] }
    /// `stored` or `default`: record collections are not overridden.
    public var layer: SettingLayer { isSet ? .stored : .default }
    /// `false`: records are not secret.
    public var isSecret: Bool { false }
    /// Whether the store holds the collection.
    public var isSet: Bool { !current.entries.isEmpty }
    /// `RecordCollection<Record>`.
    public var valueTypeName: String { "RecordCollection<\(TypeName.of(Record.self))>" }
    /// `Record.self`.
    public var valueType: Any.Type { Record.self }
    /// `true`.
    public var holdsRecords: Bool { true }
    /// The key under which the store holds the records now: see ``AnySetting/storeKey``.
    public var storeKey: String {
        guard let binding = lock.withLock({ binding }) else { return "" }
        return binding.context.hub.storeKey(binding.key)
    }
    /// The store of the collection's config; `nil` for a collection that belongs to no config.
    public var store: (any ConfigStore)? { lock.withLock { binding }?.context.store }

    /// `the store` (or what the store says of the records, such as `iCloud (device "iPad")`: see
    /// ``ConfigStore/origin(forKey:)``), or `default` when none is stored.
    public var origin: String {
        guard isSet else { return SettingLayer.default.description }
        return store?.origin(forKey: storeKey) ?? "the store"
    }
    /// What ``assign(parsing:)`` accepts: a JSON array of records.
    public var expectedFormat: String { "a JSON array of \(TypeName.of(Record.self)) records" }

    /// The records, in order, as a compact JSON array.
    public var valueText: String {
        let stored = all.compactMap { try? ValueTraits<Record>.shared.encode($0) }
        return StoredValue.array(stored).jsonText()
    }

    /// An empty collection's text: `[]`.
    public var defaultValueText: String { "[]" }

    /// The stored dictionary, id → record.
    public var storedValue: StoredValue { .dictionary(current.entries.dictionary) }

    /// Replaces every record that decodes by the records of a JSON array, in one write. Records that do not
    /// decode are kept.
    /// - Throws: ``StorableConfigError/invalidText(key:text:expected:)`` if the text is not an array of
    ///   records, ``StorableConfigError/invalidValue(key:value:reason:)`` if two records have one id,
    ///   ``StorableConfigError/typeMismatch(key:expectedType:found:reason:foundText:)`` if the stored value is
    ///   not a dictionary of records (it is left as it is: ``reset()`` replaces it).
    public func assign(parsing text: String) throws {
        guard case .array(let items)? = try? StoredValue(jsonText: text),
            let records = try? items.map({ try ValueTraits<Record>.shared.decode($0) })
        else {
            throw StorableConfigError.invalidText(key: key, text: text, expected: "\(valueTypeName): \(expectedFormat)")
        }
        var put: [String: StoredValue] = [:]
        for record in records {
            let id = record.id.description
            guard put[id] == nil else {
                throw StorableConfigError.invalidValue(
                    key: key, value: text,
                    reason: "the id '\(id)' is given to more than one record; each record needs an id of its own")
            }
            guard let stored = encode(record) else { return }
            put[id] = stored
        }
        let stale = current.records.keys.filter { put[$0] == nil }
        try perform([.remove(stale), .put(put)])
    }
}
