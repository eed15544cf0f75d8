import Foundation

/// A problem with a setting, a stored value or a store's file, described in a full sentence that names the
/// key, class, property or path involved.
///
/// Reading a setting never throws. Problems found while loading or writing a setting are passed to
/// ``StorableConfig/errorHandler`` (which prints them to standard error unless you replace it); stores'
/// initialisers and ``StorableConfig/reload()`` throw them.
///
/// ```swift
/// StorableConfig.errorHandler = { error in logger.warning("\(error)") }
/// ```
public enum StorableConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value stored for `key` is not of `expectedType`; the setting reads as its default, and the stored
    /// value is left untouched until the setting is assigned.
    ///
    /// `expectedType` is a type as Swift writes it (`Int`, `Date?`, `[String]`) or a phrase ("dictionary of
    /// records"). `foundText` is the stored value's text as the store holds it, when ``StoredValue`` holds it
    /// only approximately (a JSON file's `999999999999999999999`, which `found` holds as `1e+21`).
    case typeMismatch(key: String, expectedType: String, found: StoredValue, reason: String, foundText: String? = nil)
    /// The value assigned to `key` could not be converted to its stored form; it is kept in memory only.
    case encodingFailed(key: String, reason: String)
    /// The store failed to read `key`; the setting keeps the value it had (its default, when loading).
    case readFailed(key: String, reason: String)
    /// The store failed to write `key`; the setting reads the assigned value, while the durable storage
    /// still holds the previous one (until a later write succeeds, for a store that retries), unless the
    /// store keeps no failed writes (``ConfigStore/keepsFailedWrites``): then it reads the stored value.
    case writeFailed(key: String, reason: String)
    /// The store failed to reload from its storage.
    case reloadFailed(store: String, reason: String)
    /// Text given for `key` is not a value of the setting's type; `expected` says what would be.
    case invalidText(key: String, text: String, expected: String)
    /// The value given for `key` fails the setting's declared range or check, for `reason`: an assignment is
    /// not made, a stored value is left in the store and the setting reads its default. A stored value that
    /// arrives after the config was created (an outside change, a reload) and is not of the setting's type or
    /// fails its check is reported this way too, and the setting keeps its last good value. `value` describes
    /// the value, or is ``redacted`` for a secret setting.
    case invalidValue(key: String, value: String, reason: String)
    /// The text that an environment variable or launch argument (`origin`) gives for `key` is not a valid value:
    /// the setting reads the next source instead (a valid variable, the stored value, the default). `value` is
    /// ``redacted`` for a secret.
    case invalidOverride(origin: String, key: String, value: String, reason: String)
    /// A value was assigned to `key`, which `origin` overrides: it is stored, and read when the override goes
    /// away; until then the override is read.
    case assignedWhileOverridden(key: String, origin: String)
    /// A config class declares a setting that cannot work; raised when the class is first used.
    case invalidDeclaration(className: String, property: String, reason: String)
    /// A migration step of the config named `config` failed; nothing it changed was written, and the settings
    /// read the values as they are stored. `key` is the key the step was reading or writing, when known.
    case migrationFailed(config: String, step: String, key: String?, reason: String)
    /// The store was migrated by a newer version of the config than this program knows: it is read as well as
    /// possible, and neither migrated back nor rewritten.
    case newerSchemaVersion(config: String, stored: Int, known: Int)
    /// A store's file could not be used.
    case fileUnusable(path: String, reason: String)
    /// The kernel cannot watch `path` (a file source, or a store's file) for `reason`: it is read again every
    /// `interval` seconds instead, as is every other file that the process watches and the kernel cannot. Reported
    /// once per process.
    case watchingByPolling(path: String, reason: String, interval: Double)
    /// `UserDefaults` cannot open the suite named `suiteName`, for `reason`: ``UserDefaultsStore/init(suiteName:saving:)``
    /// returned `nil`.
    case suiteUnavailable(suiteName: String, reason: String)
    /// A store's file did not parse; its bytes were moved or copied aside to `movedTo`, so they can be
    /// recovered.
    case corruptFileQuarantined(path: String, movedTo: String, reason: String)
    /// A config of `className` uses `key`, which the config class `movedBy`, created on the same storage in
    /// this process, declares as an earlier key of `currentKey` and moves values from: the setting reads and
    /// writes `currentKey` instead, so that no write through either config is lost.
    case earlierKeyInUse(className: String, key: String, currentKey: String, movedBy: String)
    /// History or a rollback was asked of `store`, which keeps no earlier values (it does not adopt
    /// ``ConfigStoreHistory``).
    case historyNotKept(store: String)
    /// `key` was to be rolled back to its value at `revision`, which the store no longer keeps (etcd compacted
    /// it away); nothing was written.
    case revisionCompacted(key: String, revision: Int64)
    /// `key` held no value at `revision` (it did not exist yet, or had been removed); nothing was written.
    case noValueAtRevision(key: String, revision: Int64)
    /// `key` changed after the caller looked at it at revision `seen`, and is at `current` now (`nil`: it was
    /// removed): a rollback does not overwrite that change, and nothing was written.
    case changedSinceRevision(key: String, seen: Int64, current: Int64?)
    /// A file source (see ``ConfigSource``) cannot be used, in whole or in part: it is missing and not optional,
    /// cannot be read, or does not parse (`where` names the file, and the line for a `.env` file). What can be read
    /// is used; nothing is written anywhere.
    case sourceUnusable(where: String, reason: String)
    /// `origin` gives a value under `name`, which names no setting of the configs checked: most likely a typo.
    case unknownSourceName(origin: String, name: String)
    /// The file source below the store `origin` gives a new value for `key`, which the setting does not read,
    /// because `hiddenBy` (the store, or an override) hides it.
    case sourceValueHidden(key: String, origin: String, hiddenBy: String)
    /// The setting stored under `key` is not synced with other devices, or a change of it was not: `reason` says
    /// why (the cloud's limits, a full cloud, an account change). The value stays in the local store.
    case notSynced(key: String, reason: String)
    /// The secret store `store` cannot be used now, for `reason` (a device before its first unlock, a missing
    /// directory, one that others may read): the secret settings it keeps keep their last good values.
    case secretStoreUnavailable(store: String, reason: String)
    /// The value stored in plain form for the secret setting `key` could not be moved to the secret store `store`,
    /// for `reason`: it stays where it is, and the setting reads and writes it there, until a config created
    /// later over the store moves it.
    case secretNotMoved(key: String, store: String, reason: String)
    /// The setting `key` is declared secret, but the store `store` keeps its value in plain form with the
    /// others, as it keeps any value. Reported once per storage and key, for a ``JSONFileStore`` or a
    /// ``UserDefaultsStore`` that configs are created over without a `SecretRoutingStore` around it.
    case secretKeptInPlainForm(key: String, store: String)

    /// What a secret value shows as: `<redacted>`.
    public static let redacted = "<redacted>"

    /// The key, if the error concerns one setting.
    public var key: String? {
        switch self {
        case .typeMismatch(let key, _, _, _, _), .encodingFailed(let key, _), .readFailed(let key, _),
            .writeFailed(let key, _), .invalidText(let key, _, _), .invalidValue(let key, _, _),
            .invalidOverride(_, let key, _, _), .assignedWhileOverridden(let key, _), .sourceValueHidden(let key, _, _):
            key
        case .migrationFailed(_, _, let key, _): key
        case .earlierKeyInUse(_, let key, _, _): key
        case .revisionCompacted(let key, _), .noValueAtRevision(let key, _), .changedSinceRevision(let key, _, _): key
        case .notSynced(let key, _), .secretNotMoved(let key, _, _), .secretKeptInPlainForm(let key, _): key
        default: nil
        }
    }

    /// A full sentence describing the problem and what happened to the value.
    public var description: String {
        switch self {
        case .typeMismatch(let key, let expectedType, let found, let reason, let foundText):
            "The value stored for '\(key)' is not \(TypeName.withArticle(expectedType)) (\(Self.clause(reason))); the "
                + "setting reads as its default and the stored value \(foundText ?? found.description) is left in "
                + "place until the setting is assigned."
        case .encodingFailed(let key, let reason):
            "The value assigned to '\(key)' cannot be stored (\(Self.clause(reason))); it is kept in memory only."
        case .readFailed(let key, let reason):
            "Reading '\(key)' from the store failed (\(Self.clause(reason))); the setting keeps its current value."
        case .writeFailed(let key, let reason):
            "Writing '\(key)' to the store failed (\(Self.clause(reason))); the stored value stays the previous one "
                + "until a later write succeeds, and the setting reads the new value meanwhile, unless the store keeps "
                + "no failed writes (as a shared cluster's does): then it reads the stored value."
        case .reloadFailed(let store, let reason):
            "Reloading \(store) failed (\(Self.clause(reason))); the settings keep their current values."
        case .invalidText(let key, let text, let expected):
            "\"\(text)\" is not a value for '\(key)', which expects \(Self.clause(expected)); the setting is unchanged."
        case .invalidValue(let key, let value, let reason):
            "The value \(value) is not valid for '\(key)': \(Self.clause(reason))."
        case .invalidOverride(let origin, let key, let value, let reason):
            "The \(origin) gives \"\(value)\" for '\(key)', which is not valid: \(Self.clause(reason)); the setting "
                + "reads the next source instead."
        case .assignedWhileOverridden(let key, let origin):
            "A value was assigned to '\(key)', which the \(origin) overrides: it is stored, and read when the "
                + "override goes away; until then the setting reads the override."
        case .sourceUnusable(let place, let reason):
            "The config source \(place) cannot be used: \(Self.clause(reason)); what can be read of it is used, and "
                + "nothing is written anywhere."
        case .unknownSourceName(let origin, let name):
            "The \(origin) gives a value for \"\(name)\", which names no setting of the configs checked; check its "
                + "spelling."
        case .sourceValueHidden(let key, let origin, let hiddenBy):
            "The \(origin) gives a new value for '\(key)', which the setting does not read: \(hiddenBy) hides it "
                + "(reset the setting to read the file's value)."
        case .notSynced(let key, let reason):
            "'\(key)' is not synced with other devices: \(Self.clause(reason))."
        case .secretNotMoved(let key, let store, let reason):
            "The value of the secret setting '\(key)' could not be moved to the secret store \(store) "
                + "(\(Self.clause(reason))); it stays where it was stored, and is read and written there until a config "
                + "created later moves it."
        case .secretKeptInPlainForm(let key, let store):
            "'\(key)' is declared secret, but \(store) keeps its value in plain form with the other settings; to "
                + "keep it apart, create the configs over SecretRoutingStore(wrapping:) of the StorableConfigSecrets "
                + "library, which also reads again the value an earlier version kept apart."
        case .secretStoreUnavailable(let store, let reason):
            "The secret store \(store) cannot be used (\(Self.clause(reason))); the secret settings it keeps keep "
                + "their last good values."
        case .invalidDeclaration(let className, let property, let reason):
            "Invalid StorableConfig declaration \(className).\(property): \(Self.clause(reason))."
        case .migrationFailed(let config, let step, let key, let reason):
            "The migration '\(step)' of \(config) failed"
                + (key.map { " at '\($0)'" } ?? "")
                + " (\(Self.clause(reason))); nothing it changed was written, and the settings read the values as "
                + "stored."
        case .newerSchemaVersion(let config, let stored, let known):
            "The store holds \(config)'s values in schema version \(stored), newer than the version \(known) this "
                + "program knows; they are read as well as possible, and neither migrated back nor rewritten."
        case .fileUnusable(let path, let reason):
            "The settings file \(path) cannot be used: \(Self.clause(reason))."
        case .watchingByPolling(let path, let reason, let interval):
            "The kernel cannot watch \(path) for changes (\(Self.clause(reason))); it is read again every "
                + "\(interval) s instead, as is every file that this process watches and the kernel cannot."
        case .suiteUnavailable(let suiteName, let reason):
            "The UserDefaults suite '\(suiteName)' cannot be opened (\(Self.clause(reason))); no store was made for it."
        case .corruptFileQuarantined(let path, let movedTo, let reason):
            "The settings file \(path) does not parse (\(Self.clause(reason))); its bytes were saved as \(movedTo) so "
                + "that nothing is lost, and the store goes on from the values this process last knew (none, when "
                + "it was just opened)."
        case .earlierKeyInUse(let className, let key, let currentKey, let movedBy):
            "\(className) uses the key '\(key)', which \(movedBy) declares as an earlier key of '\(currentKey)' "
                + "and moves values from; while this storage is in use, \(className) reads and writes "
                + "'\(currentKey)' instead, so that no write through either config is lost. Give \(className) the "
                + "new key, or stop creating it."
        case .historyNotKept(let store):
            "The store \(store) keeps no history of values: only a store that keeps earlier revisions, such as EtcdStore, can "
                + "list them or roll a setting back."
        case .revisionCompacted(let key, let revision):
            "The value of '\(key)' at revision \(revision) is no longer kept (the store compacted its history past "
                + "it); nothing was written."
        case .noValueAtRevision(let key, let revision):
            "'\(key)' held no value at revision \(revision); nothing was written."
        case .changedSinceRevision(let key, let seen, let current):
            "'\(key)' changed after revision \(seen), and "
                + (current.map { "is at revision \($0) now" } ?? "has been removed since")
                + "; the rollback was not written, so that it does not overwrite that change."
        }
    }

    /// `text` as a clause inside a sentence: without the final period of a sentence of its own (Foundation's
    /// and the decoders' messages end with one), keeping an ellipsis.
    static func clause(_ text: String) -> String {
        var text = Substring(text)
        while text.last == " " || text.last == "\n" { text.removeLast() }
        guard text.hasSuffix("."), !text.hasSuffix("..") else { return String(text) }
        return String(text.dropLast())
    }
}
