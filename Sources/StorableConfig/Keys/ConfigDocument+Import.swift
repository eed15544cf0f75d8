extension ConfigDocument {
    /// Applies the document to `configs`, all or nothing.
    ///
    /// Each config of the document is matched to the config among `configs` whose ``StorableConfig/configName``
    /// or one of whose ``StorableConfig/previousConfigNames`` is its name, and each setting by property name or
    /// one of its previous names. A document from an earlier schema version is migrated first, in memory, by
    /// the config's ``StorableConfig/migrations``. Then, if every entry fits, the values are written: one write
    /// for the configs that share a store (one per store otherwise), which every config bound to that storage
    /// takes at once. The stored schema version is set to the config's.
    ///
    /// - Throws: ``ConfigDocumentError/doesNotFit(_:)`` listing every entry that does not fit (an unknown config
    ///   or setting, a value of the wrong type, a config from a newer schema version, a failing migration);
    ///   nothing is then changed.
    public func apply(to configs: [StorableConfig], mode: ImportMode = .merge) throws(ConfigDocumentError) {
        var problems: [String] = []
        var changes: [String: StoredValue?] = [:]
        var storages: Set<ObjectIdentifier> = []
        var written: StorableConfig?
        // The settings written, which keep what a newer version stored that they do not know.
        var boxes: [String: any SettingBox] = [:]
        for (name, entry) in self.configs.sorted(by: { $0.key < $1.key }) {
            let matches = Self.configs(named: name, in: configs)
            guard let config = matches.first else {
                let known = configs.map { type(of: $0).configName }.sorted().joined(separator: ", ")
                problems.append("unknown config '\(name)' (this program has \(known.isEmpty ? "none" : known))")
                continue
            }
            if matches.count > 1 {
                problems.append(
                    "config '\(name)' could be any of \(matches.map(\.identityDescription).joined(separator: ", ")); "
                        + "import into one of them")
                continue
            }
            guard let values = config.importedValues(entry, documentName: name, problems: &problems) else { continue }
            for (index, key) in config.schema.keys.enumerated() where values[key] != nil {
                boxes[key] = config.settings[index]
            }
            if mode == .replace {
                // Secrets the export left out keep their values, whatever the mode.
                for (setting, key) in zip(config.schema.names, config.schema.keys)
                where !entry.secretsOmitted.contains(setting) {
                    changes[key] = .some(nil)
                }
            }
            for (key, value) in values { changes[key] = .some(value) }
            let configType = type(of: config)
            if configType.schemaVersion > 0 {
                changes[configType.schemaVersionKey] = .some(.int(Int64(configType.schemaVersion)))
            }
            storages.insert(ObjectIdentifier(config.context.hub))
            written = written ?? config
        }
        // One write can only span one storage: a document for configs on several stores is refused, so that an
        // import stays all or nothing.
        if storages.count > 1 {
            problems.append(
                "the configs it covers use \(storages.count) different stores, which cannot change in one write; "
                    + "import into configs that share one store")
        }
        if !problems.isEmpty { throw .doesNotFit(problems) }
        guard let written else { return }
        // The members of the stored values that the settings know, worked out outside the store's lock (the value
        // types' decoding is their own code): the others are kept.
        var known: [String: Set<[String]>] = [:]
        let before = (try? written.context.hub.values(forKeys: Array(boxes.keys), in: written.store)) ?? [:]
        for (key, box) in boxes {
            guard let old = before[key], case let value?? = changes[key] else { continue }
            known[key] = box.knownMembers(of: old, writing: value)
        }
        let result: (version: UInt64, values: [String: StoredValue], failed: Bool)
        let origin = ImportOrigin()
        defer { withExtendedLifetime(origin) {} }
        do {
            result = try written.context.hub.update(
                keys: Array(changes.keys),
                { values in
                    for (key, value) in changes {
                        if let old = values[key], let value, let fields = known[key] {
                            values[key] = ValueEvolution.carrying(old, into: value, known: fields) ?? value
                        } else {
                            values[key] = value
                        }
                    }
                }, in: written.store, from: ObjectIdentifier(origin))
        } catch {
            throw .unreadable("the store of \(type(of: written).configName) failed: \(error)")
        }
        if result.failed { throw .unreadable("the store of \(type(of: written).configName) could not be written") }
    }

    /// The configs that a document's config `name` is meant for: those of that name, else those that had it,
    /// one per class and storage.
    private static func configs(named name: String, in configs: [StorableConfig]) -> [StorableConfig] {
        var named = configs.filter { type(of: $0).configName == name }
        if named.isEmpty { named = configs.filter { type(of: $0).previousConfigNames.contains(name) } }
        var distinct: [StorableConfig] = []
        for config in named where !distinct.contains(where: { $0.isSameConfig(as: config) }) {
            distinct.append(config)
        }
        return distinct
    }

    /// An identity that is no config's, so that every config bound to the storage takes the import.
    private final class ImportOrigin {}
}

extension StorableConfig {
    /// The stored values, by key, that `entry` gives this config: previous names mapped, migrations run,
    /// every value checked against its setting's type. Returns `nil`, adding to `problems`, if any entry does
    /// not fit.
    fileprivate func importedValues(
        _ entry: ConfigDocument.Config, documentName: String, problems: inout [String]
    ) -> [String: StoredValue]? {
        let type = type(of: self)
        let before = problems.count
        if let stored = type.storedSchemaVersion(in: store), stored > type.schemaVersion {
            problems.append(
                "\(documentName): the store holds schema version \(stored), newer than the version "
                    + "\(type.schemaVersion) this program knows; importing would take it back")
            return nil
        }
        if entry.schemaVersion > type.schemaVersion {
            problems.append(
                "\(documentName): the document is of schema version \(entry.schemaVersion), newer than the version "
                    + "\(type.schemaVersion) this program knows")
            return nil
        }
        // Each name becomes the key it is stored under: today's setting's, or the old name's own.
        var byKey: [String: StoredValue] = [:]
        var origin: [String: String] = [:]
        for (name, value) in entry.settings {
            let index =
                schema.names.firstIndex(of: name)
                ?? settings.indices.first { settings[$0].declaredKeys.previousNames.contains(name) }
            let key = index.map { schema.keys[$0] } ?? "\(type.namespace).\(type.configName).\(name)"
            byKey[key] = value
            origin[key] = name
        }
        // The keys a migration read, which need no setting of their own.
        var read: Set<String> = []
        if entry.schemaVersion < type.schemaVersion {
            let source = byKey
            var values = MigrationValues(
                namespace: type.namespace, configName: type.configName, settings: settingsForMigration,
                read: { key in
                    read.insert(key)
                    return source[key]
                })
            do {
                try migrate(&values, from: entry.schemaVersion)
            } catch {
                problems.append("\(documentName): \(error)")
                return nil
            }
            for (key, change) in values.changes { byKey[key] = change }
        }
        var result: [String: StoredValue] = [:]
        for (key, value) in byKey {
            let name = origin[key] ?? key
            guard let index = schema.indexByKey[key] else {
                if !read.contains(key) {
                    problems.append("\(documentName).\(name): \(type.configName) has no setting of that name")
                }
                continue
            }
            if let problem = settings[index].readProblem(value) {
                let shown = settings[index].isSecret ? StorableConfigError.redacted : "\(value)"
                let expected = TypeName.withArticle(settings[index].valueTypeName)
                problems.append(
                    "\(documentName).\(name): \(shown) is not \(expected) (\(StorableConfigError.clause(problem)))")
                continue
            }
            result[key] = value
        }
        return problems.count == before ? result : nil
    }
}
