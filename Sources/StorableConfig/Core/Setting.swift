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
    // Observation: observers, and the changes waiting to be told to them in order (see `deliverChanges`).
    private var observers: [UInt64: Observer] = [:]
    private var changeCount: UInt64 = 0
    private var undeliveredChanges: [(number: UInt64, old: Value, new: Value)] = []
    private var isDelivering = false
    private var observationEnded = false
    /// The value before a batch's first assignment, which the batch's change is measured from.
    private var valueBeforeBatch: Value?

    private struct Observer {
        /// The change count when the observer was added; it is told only of later changes.
        let since: UInt64
        let onChange: @Sendable (Value) -> Void
        let onEnd: (@Sendable () -> Void)?
    }

    private struct Binding {
        let name: String
        let key: String
        let context: ConfigContext
        /// `nil` removes the stored value, rather than storing "no value", when the default is `nil`.
        let removesOnNil: Bool
        /// Names this setting to the Observation framework.
        let observationKeyPath: KeyPath<ConfigContext, Int>
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
            let current = value
            let binding = binding
            lock.unlock()
            if let binding { binding.context.observationAccess(binding.observationKeyPath) }
            return current
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
        let completion: @Sendable (UInt64) -> Void = { [self] version in
            apply(defaultValue, isSet: false, version: version, stored: nil)
        }
        let written = binding.context.write([((binding.key, nil, nil), completion)])
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
                apply(newValue, isSet: isSet, version: nil, stored: nil)
                return
            }
        }
        let isSet = stored != nil
        let completion: @Sendable (UInt64) -> Void = { [self] version in
            apply(newValue, isSet: isSet, version: version, stored: stored)
        }
        let written = binding.context.write([((binding.key, stored, newValue), completion)])
        if !written { applyPending(newValue, isSet: isSet) }
    }

    /// Shows a value assigned inside a batch at once; the batch's write gives it its version and tells the
    /// observers, once.
    private func applyPending(_ newValue: Value, isSet: Bool) {
        lock.withLock {
            if valueBeforeBatch == nil { valueBeforeBatch = .some(value) }
            value = newValue
            hasStoredValue = isSet
        }
    }

    /// Takes `newValue` unless the setting already holds a newer version (`nil`: a change kept in memory
    /// only), then tells the observers if the value changed. `stored` is its stored form, when known.
    private func apply(_ newValue: Value, isSet: Bool, version newVersion: UInt64?, stored: StoredValue?) {
        lock.lock()
        if let newVersion {
            guard newVersion >= version else {
                lock.unlock()
                return
            }
            version = newVersion
        }
        let old: Value
        if case .some(let before) = valueBeforeBatch { old = before } else { old = value }
        valueBeforeBatch = nil
        value = newValue
        hasStoredValue = isSet
        var mustDeliver = false
        if binding != nil, !observationEnded, hasChanged(from: old, to: newValue, stored: stored) {
            changeCount += 1
            undeliveredChanges.append((changeCount, old, newValue))
            if !isDelivering {
                isDelivering = true
                mustDeliver = true
            }
        }
        lock.unlock()
        if mustDeliver { deliverChanges() }
    }

    /// Whether `new` differs from `old`: by `==` for `Equatable` values, else by stored form when someone
    /// listens (a change that nobody listens to but Observation is treated as a change). Called with `lock`.
    private func hasChanged(from old: Value, to new: Value, stored: StoredValue?) -> Bool {
        if let old = old as? any Equatable { return !old.isEqual(to: new) }
        guard !observers.isEmpty || binding?.context.hasChangeObservers == true else { return true }
        return (try? StoredValueCoding.encode(old)) != (stored ?? (try? StoredValueCoding.encode(new)))
    }

    /// Tells the observers of every undelivered change, in order, outside the lock.
    ///
    /// One thread at a time delivers; a change made meanwhile, by another thread or by an observer itself,
    /// is queued and delivered by the thread already delivering, so observers see changes in the order they
    /// happened, an observer may read and write settings, and other writers never wait for observers.
    private func deliverChanges() {
        while true {
            lock.lock()
            guard !undeliveredChanges.isEmpty, let binding else {
                isDelivering = false
                lock.unlock()
                return
            }
            let changes = undeliveredChanges
            undeliveredChanges = []
            let observers = Array(self.observers.values)
            lock.unlock()
            for change in changes {
                binding.context.observationDidChange(binding.observationKeyPath)
                for observer in observers where change.number > observer.since {
                    observer.onChange(change.new)
                }
                binding.context.tellChangeObservers(
                    ConfigChange(name: binding.name, key: binding.key, oldValue: change.old, newValue: change.new))
            }
        }
    }

    /// Adds an observer of later changes; with `initial`, also calls it now with the current value, before
    /// any later change.
    func addObserver(
        initial: Bool, onChange: @escaping @Sendable (Value) -> Void, onEnd: (@Sendable () -> Void)? = nil
    ) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        if initial { onChange(value) }
        guard !observationEnded else {
            onEnd?()
            return nil
        }
        let identifier = ObservationToken.nextIdentifier()
        observers[identifier] = Observer(since: changeCount, onChange: onChange, onEnd: onEnd)
        return identifier
    }

    func removeObserver(_ identifier: UInt64) {
        lock.withLock { _ = observers.removeValue(forKey: identifier) }
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}

extension Setting: SettingBox {
    func bind(name: String, key: String, context: ConfigContext, observationKeyPath: KeyPath<ConfigContext, Int>) {
        lock.withLock {
            let defaultIsNil = (declaredDefault as? any OptionalValue)?.isNil ?? false
            binding = Binding(
                name: name, key: key, context: context, removesOnNil: defaultIsNil,
                observationKeyPath: observationKeyPath)
        }
    }

    func endObservation() {
        let ended = lock.withLock {
            observationEnded = true
            defer { observers = [:] }
            return Array(observers.values)
        }
        for observer in ended { observer.onEnd?() }
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
            apply(defaultValue, isSet: false, version: version, stored: nil)
            return
        }
        // Unwrap first: `nil as? Value` succeeds when `Value` is itself an Optional.
        if let typedValue, let typed = typedValue as? Value {
            apply(typed, isSet: true, version: version, stored: stored)
            return
        }
        do {
            apply(try StoredValueCoding.decode(Value.self, from: stored), isSet: true, version: version, stored: stored)
        } catch {
            let key = lock.withLock { binding?.key ?? "" }
            StorableConfig.report(
                .typeMismatch(
                    key: key, expectedType: StoredValueCoding.typeName(Value.self), found: stored,
                    reason: "\(error)"))
            apply(defaultValue, isSet: true, version: version, stored: nil)
        }
    }
}

/// What a config needs from a setting without knowing its value type.
protocol SettingBox: AnySetting {
    /// Connects the setting to its name, key and config; called once, from the config's initializer.
    func bind(name: String, key: String, context: ConfigContext, observationKeyPath: KeyPath<ConfigContext, Int>)
    /// Finishes every observer: the config is going away.
    func endObservation()
    /// Returns why the declared default cannot be stored and read back, or `nil` if it can.
    func declarationProblem() -> String?
    /// Reads the default at once, inside a batch whose write will remove the stored value.
    func showPendingReset()
    /// Takes the value that the store holds at `version`, unless the setting already holds a newer one.
    func load(_ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64)
}
