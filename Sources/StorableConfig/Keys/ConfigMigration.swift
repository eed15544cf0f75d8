/// One step that brings a config's stored values from an earlier layout to a later one: what names alone
/// cannot express, such as a change of type or unit, or settings split, merged or dropped.
///
/// ```swift
/// final class PlayerConfig: StorableConfig {
///     @Setting var fadeDuration = 0.25   // seconds; version 1 stored an Int of milliseconds
///
///     override class var migrations: [ConfigMigration] {
///         [
///             ConfigMigration(to: 2, "fade duration in seconds") { values in
///                 if let milliseconds = try values.value("fadeDuration", as: Int.self) {
///                     try values.setValue(Double(milliseconds) / 1000, for: "fadeDuration")
///                 }
///             }
///         ]
///     }
/// }
/// ```
///
/// When a config is created, the steps whose ``version`` is above the version its store was last migrated to
/// run in order, and their changes and the new version are written in one write: all or nothing. A step that
/// throws changes nothing, and is reported with the config, the step and the key. See Docs/Migrations.md.
public struct ConfigMigration: Sendable {
    /// The schema version the step brings the stored values to.
    public let version: Int
    /// What the step does, for reports.
    public let name: String
    let body: @Sendable (inout MigrationValues) throws -> Void

    /// A step to `version` (1 or more), named `name` in reports, whose `body` reads and writes the config's
    /// stored values by property name.
    public init(
        to version: Int, _ name: String = "", _ body: @escaping @Sendable (inout MigrationValues) throws -> Void
    ) {
        self.version = version
        self.name = name
        self.body = body
    }
}

/// A config's stored values as a migration step sees them, by property name: the names of settings the class
/// declares today (whose keys may be explicit), and any earlier name, whose key is
/// `<namespace>.<configName>.<name>`.
///
/// Reads see the changes of earlier steps in the same run. Nothing is written until every step has run.
public struct MigrationValues {
    /// A current setting: its key and a check of its type.
    typealias CurrentSetting = (key: String, readProblem: (StoredValue) -> String?, typeName: String)

    let namespace: String
    let configName: String
    /// The current settings, by name.
    let settings: [String: CurrentSetting]
    let read: (String) throws -> StoredValue?
    /// The steps' changes so far, by key (`nil`: removed).
    var changes: [String: StoredValue?] = [:]

    /// An error of a migration step about one key.
    public struct Failure: Error, CustomStringConvertible {
        /// The key concerned.
        public let key: String
        /// What went wrong.
        public let reason: String

        /// The key and the reason.
        public var description: String { "'\(key)': \(reason)" }
    }

    /// The key that `name` is stored under.
    public func key(for name: String) -> String {
        settings[name]?.key ?? "\(namespace).\(configName).\(name)"
    }

    /// Whether a value is stored under `name`.
    public func contains(_ name: String) throws -> Bool {
        try stored(key(for: name)) != nil
    }

    /// The value stored under `name`, as a `Value`, or `nil` if there is none.
    /// - Throws: ``Failure`` naming the key if the stored value is not a `Value`.
    public func value<Value: Codable & Sendable>(_ name: String, as type: Value.Type = Value.self) throws -> Value? {
        let key = key(for: name)
        guard let stored = try stored(key) else { return nil }
        do {
            return try ValueTraits<Value>.shared.decode(stored)
        } catch {
            // Neither the value nor the decoder's message, which may quote it: the key may be a secret's.
            throw Failure(
                key: key, reason: "the stored value is not \(TypeName.withArticle(ValueTraits<Value>.shared.typeName))")
        }
    }

    /// Stores `value` under `name`.
    /// - Throws: ``Failure`` naming the key if `value` cannot be stored, or is not of the type of the setting
    ///   that `name` names.
    public mutating func setValue<Value: Codable & Sendable>(_ value: Value, for name: String) throws {
        let key = key(for: name)
        let stored: StoredValue
        do {
            stored = try ValueTraits<Value>.shared.encode(value)
        } catch {
            throw Failure(key: key, reason: "the value cannot be stored: \(error)")
        }
        if let setting = settings[name], let problem = setting.readProblem(stored) {
            throw Failure(
                key: key,
                reason: "\(TypeName.withArticle(ValueTraits<Value>.shared.typeName)) is not a value of the setting "
                    + "'\(name)', \(TypeName.withArticle(setting.typeName)): \(problem)")
        }
        changes[key] = .some(stored)
    }

    /// Removes the value stored under `name`.
    public mutating func removeValue(for name: String) {
        changes[key(for: name)] = .some(nil)
    }

    private func stored(_ key: String) throws -> StoredValue? {
        try changes[key] ?? read(key)
    }
}
