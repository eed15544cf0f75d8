/// A change to one setting of a config, as ``StorableConfig/changes`` and ``StorableConfig/observe(_:)``
/// report it.
///
/// ```swift
/// for await change in config.changes {
///     print("\(change.name): \(change.oldValue) → \(change.newValue)")
/// }
/// ```
public struct ConfigChange: Sendable, CustomStringConvertible {
    /// The name of the setting's property.
    public let name: String
    /// The setting's key.
    public let key: String
    /// The value before the change, of the setting's type.
    public let oldValue: any Sendable
    /// The value after the change, of the setting's type.
    public let newValue: any Sendable

    /// "name: old → new".
    public var description: String {
        "\(name): \(String(describing: oldValue)) → \(String(describing: newValue))"
    }
}
