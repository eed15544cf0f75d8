import Foundation

/// A setting of a ``StorableConfig``: a property that loads, defaults and persists itself.
///
/// Declare a setting in one line, with its default as the initial value:
///
/// ```swift
/// final class AppConfig: StorableConfig {
///     @Setting var isFirstLaunch = true
///     @Setting var selectedHobbies: [String] = []
///     @Setting var nickname: String? = nil
/// }
/// let config = AppConfig()
/// config.isFirstLaunch = false      // written to the store before the assignment returns
/// config.$isFirstLaunch.key         // "com.example.app.AppConfig.isFirstLaunch"
/// config.$isFirstLaunch.reset()     // removes the stored value; reads `true` again
/// ```
///
/// `Value` is any `Codable & Sendable` type. Reading a setting returns the value held in memory, so it
/// costs about as much as reading a locked property and never touches the store. Assigning writes through
/// to the store and, before returning, updates every other config bound to the same storage.
///
/// Assigning `nil` to an optional setting whose default is `nil` removes the stored value; if the default
/// is not `nil`, an explicit "no value" is stored instead (so that the setting still reads `nil` after a
/// relaunch). ``reset()`` is what brings a default back.
@propertyWrapper
public final class Setting<Value: Codable & Sendable>: @unchecked Sendable {
    // Every mutable property below is guarded by `lock`.
    private let lock = Lock()
    private var value: Value
    private var declaredDefault: Value
    private var hasStoredValue = false
    /// The store version this value came from; older deliveries are ignored, so concurrent writers and
    /// configs converge on the store's last value.
    private var version: UInt64 = 0
    private var binding: Binding?

    private struct Binding {
        let name: String
        let key: String
        let context: ConfigContext
        /// `nil` removes the stored value, rather than storing "no value", when the default is `nil`.
        let removesOnNil: Bool
    }

    /// Creates a setting whose default is `wrappedValue`.
    public init(wrappedValue: Value) {
        value = wrappedValue
        declaredDefault = wrappedValue
    }

    /// The setting's current value.
    public var wrappedValue: Value {
        get {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
        set { assign(newValue) }
    }

    /// The setting itself, through `$name`: its ``key``, ``defaultValue``, ``isSet`` and ``reset()``.
    public var projectedValue: Setting<Value> { self }

    /// The key under which the setting is stored: `"<namespace>.<configName>.<propertyName>"`.
    ///
    /// Empty for a `Setting` that is not a property of a ``StorableConfig``.
    public var key: String {
        lock.withLock { binding?.key ?? "" }
    }

    /// The name of the property that declares the setting; empty for a `Setting` that is not a property of a
    /// ``StorableConfig``.
    public var name: String {
        lock.withLock { binding?.name ?? "" }
    }

    /// The value the setting reads when nothing is stored: its declared initial value.
    public var defaultValue: Value {
        lock.withLock { declaredDefault }
    }

    /// Whether the store holds a value for this setting (even one of the wrong type).
    public var isSet: Bool {
        lock.withLock { hasStoredValue }
    }

    /// Removes the stored value, so that the setting reads its default again.
    public func reset() {
        guard let binding = lock.withLock({ binding }) else {
            lock.withLock { value = declaredDefault }
            return
        }
        let defaultValue = self.defaultValue
        let written = binding.context.write([(binding.key, nil, nil)]) { [self] version in
            apply(defaultValue, isSet: false, version: version)
        }
        if !written { applyPending(defaultValue, isSet: false) }
    }

    private func assign(_ newValue: Value) {
        lock.lock()
        guard let binding else {
            // Not bound yet: the subclass's initializer is assigning before `super.init`, which sets the
            // default, exactly like the declaration's initial value does.
            value = newValue
            declaredDefault = newValue
            lock.unlock()
            return
        }
        lock.unlock()
        let stored: StoredValue?
        if binding.removesOnNil, let optional = newValue as? any OptionalValue, optional.isNil {
            stored = nil
        } else {
            do {
                stored = try StoredValueCoding.encode(newValue)
            } catch {
                StorableConfig.report(.encodingFailed(key: binding.key, reason: "\(error)"))
                lock.withLock { value = newValue }
                return
            }
        }
        let isSet = stored != nil
        let written = binding.context.write([(binding.key, stored, newValue)]) { [self] version in
            apply(newValue, isSet: isSet, version: version)
        }
        if !written { applyPending(newValue, isSet: isSet) }
    }

    /// Shows a value assigned inside a batch at once; the batch's write gives it its version.
    private func applyPending(_ newValue: Value, isSet: Bool) {
        lock.withLock {
            value = newValue
            hasStoredValue = isSet
        }
    }

    private func apply(_ newValue: Value, isSet: Bool, version newVersion: UInt64) {
        lock.withLock {
            guard newVersion >= version else { return }
            value = newValue
            hasStoredValue = isSet
            version = newVersion
        }
    }
}

extension Setting: SettingBox {
    func bind(name: String, key: String, context: ConfigContext) {
        lock.withLock {
            let defaultIsNil = (declaredDefault as? any OptionalValue)?.isNil ?? false
            binding = Binding(name: name, key: key, context: context, removesOnNil: defaultIsNil)
        }
    }

    func showPendingReset() {
        applyPending(defaultValue, isSet: false)
    }

    func declarationProblem() -> String? {
        let value = defaultValue
        do {
            let stored = try StoredValueCoding.encode(value)
            _ = try StoredValueCoding.decode(Value.self, from: stored)
            return nil
        } catch {
            return "values of type \(StoredValueCoding.typeName(Value.self)) cannot be stored and read back "
                + "(\(error)); declare a Codable type whose encoding round-trips"
        }
    }

    func load(_ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64) {
        guard let stored else {
            apply(defaultValue, isSet: false, version: version)
            return
        }
        // Unwrap first: `nil as? Value` succeeds when `Value` is itself an Optional.
        if let typedValue, let typed = typedValue as? Value {
            apply(typed, isSet: true, version: version)
            return
        }
        do {
            apply(try StoredValueCoding.decode(Value.self, from: stored), isSet: true, version: version)
        } catch {
            let key = lock.withLock { binding?.key ?? "" }
            StorableConfig.report(
                .typeMismatch(
                    key: key, expectedType: StoredValueCoding.typeName(Value.self), found: stored,
                    reason: "\(error)"))
            apply(defaultValue, isSet: true, version: version)
        }
    }
}

/// What a config needs from a setting without knowing its value type.
protocol SettingBox: AnySetting {
    /// Connects the setting to its name, key and config; called once, from the config's initializer.
    func bind(name: String, key: String, context: ConfigContext)
    /// Returns why the declared default cannot be stored and read back, or `nil` if it can.
    func declarationProblem() -> String?
    /// Reads the default at once, inside a batch whose write will remove the stored value.
    func showPendingReset()
    /// Takes the value that the store holds at `version`, unless the setting already holds a newer one.
    func load(_ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64)
}
