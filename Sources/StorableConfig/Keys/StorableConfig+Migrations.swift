extension StorableConfig {
    /// The key under which a store records the schema version it was migrated to:
    /// `<namespace>.<configName>.@schemaVersion` (no property can be named so).
    public class var schemaVersionKey: String { "\(namespace).\(configName).@schemaVersion" }

    /// The version keys of the class under its previous namespaces and config names, in search order.
    static var earlierSchemaVersionKeys: [String] {
        let keys = ([namespace] + previousNamespaces).flatMap { namespace in
            ([configName] + previousConfigNames).map { "\(namespace).\($0).@schemaVersion" }
        }
        var seen: Set<String> = [schemaVersionKey]
        return keys.filter { seen.insert($0).inserted }
    }

    /// The schema version that `store` holds for this class (under its current or an earlier name), if any.
    static func storedSchemaVersion(in store: any ConfigStore) -> Int? {
        for key in [schemaVersionKey] + earlierSchemaVersionKeys {
            if case .int(let version)? = try? store.value(forKey: key) { return Int(version) }
        }
        return nil
    }

    /// The migration steps in the order they run; stops the program, like any declaration error, if two have
    /// one version, a version is below 1, or one is above ``schemaVersion``.
    static func orderedMigrations() -> [ConfigMigration] {
        let steps = migrations.sorted { $0.version < $1.version }
        let className = String(describing: self)
        for (index, step) in steps.enumerated() {
            var problem: String?
            if step.version < 1 {
                problem = "its version \(step.version) is below 1; a store with no version is at version 0"
            } else if step.version > schemaVersion {
                problem = "its version \(step.version) is above the class's schemaVersion \(schemaVersion)"
            } else if index > 0, steps[index - 1].version == step.version {
                problem = "another migration has the same version \(step.version)"
            }
            if let problem {
                fatalError(
                    StorableConfigError.invalidDeclaration(
                        className: className, property: "migrations", reason: "the migration '\(step.name)': \(problem)"
                    ).description)
            }
        }
        return steps
    }

    /// The class's settings by name, for ``MigrationValues``.
    var settingsForMigration: [String: MigrationValues.CurrentSetting] {
        var byName: [String: MigrationValues.CurrentSetting] = [:]
        for (index, setting) in settings.enumerated() {
            byName[schema.names[index]] = (schema.keys[index], setting.readProblem, setting.valueTypeName)
        }
        return byName
    }

    /// Runs the steps above `storedVersion` on `values`.
    /// - Throws: ``StorableConfigError/migrationFailed(config:step:key:reason:)`` for the first step that throws.
    func migrate(_ values: inout MigrationValues, from storedVersion: Int) throws {
        let type = type(of: self)
        for step in type.orderedMigrations() where step.version > storedVersion {
            do {
                try step.body(&values)
            } catch {
                let failure = error as? MigrationValues.Failure
                throw StorableConfigError.migrationFailed(
                    config: type.configName, step: step.name.isEmpty ? "to \(step.version)" : step.name,
                    key: failure?.key, reason: failure?.reason ?? "\(error)")
            }
        }
    }

    /// Brings the store up to ``schemaVersion``: the steps' changes and the new version in one write, planned
    /// and verified as moves are, so that two processes migrating one file at once migrate it once.
    func runMigrations() {
        let type = type(of: self)
        let target = type.schemaVersion
        guard target > 0 else { return }
        let versionKey = type.schemaVersionKey
        var report: StorableConfigError?
        do {
            _ = try PlannedUpdate.run(
                keys: [versionKey], in: store, hub: context.hub, origin: ObjectIdentifier(context)
            ) { snapshot in
                report = nil
                var changes: [String: StoredValue?] = [:]
                var stored = try snapshot.value(forKey: versionKey)
                if stored == nil {
                    // A renamed class or namespace: the version moves with the values, in the same write.
                    for key in type.earlierSchemaVersionKeys {
                        guard let earlier = try snapshot.value(forKey: key) else { continue }
                        stored = earlier
                        changes[key] = .some(nil)
                        changes[versionKey] = .some(earlier)
                        break
                    }
                }
                let storedVersion: Int
                switch stored {
                case nil: storedVersion = 0
                case .int(let number)?: storedVersion = Int(number)
                case let other?:
                    report = .typeMismatch(
                        key: versionKey, expectedType: "Int", found: other,
                        reason: "a schema version must be a whole number; no migration runs")
                    return [:]
                }
                if storedVersion > target {
                    report = .newerSchemaVersion(config: type.configName, stored: storedVersion, known: target)
                    return changes
                }
                guard storedVersion < target else { return changes }
                var values = MigrationValues(
                    namespace: type.namespace, configName: type.configName, settings: settingsForMigration,
                    read: snapshot.value(forKey:))
                try migrate(&values, from: storedVersion)
                changes.merge(values.changes) { _, new in new }
                changes[versionKey] = .some(.int(Int64(target)))
                return changes
            }
        } catch let error as StorableConfigError {
            report = error
        } catch {
            report = .readFailed(key: versionKey, reason: "\(error)")
        }
        if let report { StorableConfig.report(report) }
    }
}
