/// A change to one setting of a config, as ``StorableConfig/changes`` and ``StorableConfig/observe(_:)``
/// report it.
///
/// ```swift
/// for await change in config.changes {
///     print("\(change.name): \(change.oldValue) → \(change.newValue)")
/// }
/// ```
public struct ConfigChange: Sendable, CustomStringConvertible, CustomReflectable {
    /// The name of the setting's property.
    public let name: String
    /// The setting's key.
    public let key: String
    /// The value before the change, of the setting's type.
    public let oldValue: any Sendable
    /// The value after the change, of the setting's type.
    public let newValue: any Sendable
    /// Whether the setting is secret: its values then show as `<redacted>` in ``description``.
    public let isSecret: Bool
    /// Where the store says the new value came from, when it says more than "the store"
    /// (``ConfigStore/origin(forKey:)``): `iCloud (device "iPad")` for a value that a synced store took from
    /// another device. `nil` otherwise.
    public let origin: String?

    /// The name, key and values, with `<redacted>` for a secret's, so that `dump` shows no secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "key": key, "oldValue": isSecret ? StorableConfigError.redacted : oldValue,
                "newValue": isSecret ? StorableConfigError.redacted : newValue, "isSecret": isSecret,
            ])
    }

    /// The old value as compact JSON text (`""`, `["sleep"]`), or `<redacted>` for a secret.
    public var oldValueText: String { Self.text(of: oldValue, isSecret: isSecret) }
    /// The new value as compact JSON text, or `<redacted>` for a secret.
    public var newValueText: String { Self.text(of: newValue, isSecret: isSecret) }

    private static func text(of value: any Sendable, isSecret: Bool) -> String {
        if isSecret { return StorableConfigError.redacted }
        guard let encodable = value as? any Encodable, let stored = try? StoredValueCoding.encodeCodable(encodable)
        else { return String(describing: value) }
        return stored.jsonText()
    }

    /// "name: old → new", or "name: <redacted> → <redacted>" for a secret.
    public var description: String {
        if isSecret { return "\(name): \(StorableConfigError.redacted) → \(StorableConfigError.redacted)" }
        return "\(name): \(String(describing: oldValue)) → \(String(describing: newValue))"
    }
}
