import CStorableConfigSupport
import Foundation

#if canImport(Observation)
import Observation
#endif

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
/// `Value` is any `Codable & Sendable` type. Reading a setting returns the value held in memory, under a spin
/// lock, and never touches the store. Assigning writes through
/// to the store and, before returning, updates every other config bound to the same storage.
///
/// Assigning `nil` to an optional setting whose default is `nil` removes the stored value; if the default
/// is not `nil`, an explicit "no value" is stored instead (so that the setting still reads `nil` after a
/// relaunch). ``reset()`` is what brings a default back.
@propertyWrapper
public final class Setting<Value: Codable & Sendable>: @unchecked Sendable {
    // Every mutable property below is guarded by `spinLock`, one of a shared pool. Code holding it never
    // takes another setting's lock, since two settings may share one.
    @usableFromInline let spinLock: UnsafeMutablePointer<UInt32>
    // Guarded by the spin lock, so the dynamic exclusivity check (a few ns per read) adds nothing.
    @usableFromInline @exclusivity(unchecked) var value: Value
    private var declaredDefault: Value
    private var hasStoredValue = false
    /// `nil` removes the stored value, rather than storing "no value", when the default is `nil`.
    private var removesOnNil = false
    /// The store version this value came from; older deliveries are ignored, so concurrent writers and
    /// configs converge on the store's last value.
    private var version: UInt64 = 0
    private var binding: SettingBinding?
    /// The same binding, read on every get without retaining it; the strong `binding` keeps it alive.
    @usableFromInline var bindingForReads: Unmanaged<SettingBinding>?
    private var traits: ValueTraits<Value>?
    /// Observers and undelivered changes, made when first needed (most settings are never observed).
    private var observation: ObservationState<Value>?
    /// How many observers `observation` holds, readable without touching its generic type.
    private var observerCount = 0

    /// Creates a setting whose default is `wrappedValue`.
    public init(wrappedValue: Value) {
        spinLock = storable_config_pooled_spin_lock()
        value = wrappedValue
        declaredDefault = wrappedValue
        SettingRegistration.register(self)
    }

    /// The setting's current value.
    @inlinable
    public var wrappedValue: Value {
        get {
            storable_config_spin_lock(spinLock)
            let current = value
            storable_config_spin_unlock(spinLock)
            if let binding = bindingForReads { binding._withUnsafeGuaranteedRef { $0.recordAccess() } }
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
        locked { binding?.key ?? "" }
    }

    /// The name of the property that declares the setting; empty for a `Setting` that is not a property of a
    /// ``StorableConfig``.
    public var name: String {
        locked { binding?.name ?? "" }
    }

    /// The value the setting reads when nothing is stored: its declared initial value.
    public var defaultValue: Value {
        locked { declaredDefault }
    }

    /// Whether the store holds a value for this setting (even one of the wrong type).
    public var isSet: Bool {
        locked { hasStoredValue }
    }

    /// Removes the stored value, so that the setting reads its default again.
    public func reset() {
        guard let binding = locked({ binding }) else {
            locked { value = declaredDefault }
            return
        }
        write(defaultValue, stored: nil, typedValue: nil, through: binding)
    }

    @inline(__always)
    private func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        storable_config_spin_lock(spinLock)
        defer { storable_config_spin_unlock(spinLock) }
        return try body()
    }

    @usableFromInline
    func assign(_ newValue: Value) {
        storable_config_spin_lock(spinLock)
        guard let binding, let traits else {
            // Not bound yet: the subclass's initializer is assigning before `super.init`, which sets the
            // default, exactly like the declaration's initial value does.
            value = newValue
            declaredDefault = newValue
            storable_config_spin_unlock(spinLock)
            return
        }
        let removesOnNil = removesOnNil
        storable_config_spin_unlock(spinLock)
        let stored: StoredValue?
        if removesOnNil, traits.isNil?(newValue) == true {
            stored = nil
        } else {
            do {
                stored = try traits.encode(newValue)
            } catch {
                StorableConfig.report(.encodingFailed(key: binding.key, reason: "\(error)"))
                apply(newValue, isSet: isSet, version: nil, stored: nil)
                return
            }
        }
        write(newValue, stored: stored, typedValue: newValue, through: binding)
    }

    /// Writes `stored` (`nil` removes the key) and then holds `newValue`; inside a batch on this thread, holds
    /// it at once and leaves the write, and telling the observers, to the end of the batch.
    private func write(_ newValue: Value, stored: StoredValue?, typedValue: Value?, through binding: SettingBinding) {
        let isSet = stored != nil
        if let version = binding.context.writeOne(key: binding.key, stored: stored, typedValue: typedValue) {
            apply(newValue, isSet: isSet, version: version, stored: stored)
        } else {
            binding.context.deferToBatch(SettingChange(key: binding.key, stored: stored, typedValue: typedValue)) {
                [self] version in apply(newValue, isSet: isSet, version: version, stored: stored)
            }
            applyPending(newValue, isSet: isSet)
        }
    }

    /// Shows a value assigned inside a batch at once; the batch's write gives it its version and tells the
    /// observers, once.
    private func applyPending(_ newValue: Value, isSet: Bool) {
        locked {
            let state = observationState()
            if state.valueBeforeBatch == nil { state.valueBeforeBatch = .some(value) }
            value = newValue
            hasStoredValue = isSet
        }
    }

    /// The observation state, made on first use. Called with the lock held.
    private func observationState() -> ObservationState<Value> {
        if let observation { return observation }
        let state = ObservationState<Value>()
        observation = state
        return state
    }

    /// Takes `newValue` unless the setting already holds a newer version (`nil`: a change kept in memory
    /// only), then tells the observers if the value changed. `stored` is its stored form, when known.
    private func apply(_ newValue: Value, isSet: Bool, version newVersion: UInt64?, stored: StoredValue?) {
        storable_config_spin_lock(spinLock)
        if let newVersion {
            guard newVersion >= version else {
                storable_config_spin_unlock(spinLock)
                return
            }
            version = newVersion
        }
        let old: Value
        if let observation, case .some(let before) = observation.valueBeforeBatch {
            old = before
            observation.valueBeforeBatch = nil
        } else {
            old = value
        }
        value = newValue
        hasStoredValue = isSet
        guard let binding, let traits else {
            storable_config_spin_unlock(spinLock)
            return
        }
        guard observerCount > 0 || binding.context.hasChangeObservers else {
            // Nobody to tell in order: only the Observation framework needs to hear of a change.
            storable_config_spin_unlock(spinLock)
            if Self.hasChanged(from: old, to: newValue, stored: stored, traits: traits, listening: false) {
                binding.observationDidChange()
            }
            return
        }
        // Queued in version order under the lock; whether it is a change at all is decided by the delivering
        // thread, outside the lock, because `==` and `encode(to:)` are the value type's own code.
        let state = observationState()
        state.changeCount += 1
        state.undelivered.append((state.changeCount, old, newValue, stored))
        let mustDeliver = !state.isDelivering
        state.isDelivering = true
        storable_config_spin_unlock(spinLock)
        if mustDeliver { deliverChanges(binding, traits: traits) }
    }

    /// Whether `new` differs from `old`: by `==` for `Equatable` values, else, when someone listens, by stored
    /// form (a change that only Observation hears of is taken as a change without encoding). Called without
    /// the lock.
    private static func hasChanged(
        from old: Value, to new: Value, stored: StoredValue?, traits: ValueTraits<Value>, listening: Bool
    ) -> Bool {
        if let isEqual = traits.isEqual { return !isEqual(old, new) }
        guard listening else { return true }
        return (try? traits.encode(old)) != (stored ?? (try? traits.encode(new)))
    }

    /// Tells the observers of every undelivered change, in order, outside the lock.
    ///
    /// One thread at a time delivers; a change made meanwhile, by another thread or by an observer itself,
    /// is queued and delivered by the thread already delivering, so observers see changes in the order they
    /// happened, an observer may read and write settings, and other writers never wait for observers.
    private func deliverChanges(_ binding: SettingBinding, traits: ValueTraits<Value>) {
        while true {
            storable_config_spin_lock(spinLock)
            guard let state = observation, !state.undelivered.isEmpty else {
                observation?.isDelivering = false
                storable_config_spin_unlock(spinLock)
                return
            }
            let changes = state.undelivered
            state.undelivered = []
            let observers = Array(state.observers.values)
            storable_config_spin_unlock(spinLock)
            for change in changes
            where Self.hasChanged(from: change.old, to: change.new, stored: change.stored, traits: traits, listening: true)
            {
                binding.observationDidChange()
                for observer in observers where change.number > observer.since {
                    observer.onChange(change.new)
                }
                if binding.context.hasChangeObservers {
                    binding.context.tellChangeObservers(
                        ConfigChange(name: binding.name, key: binding.key, oldValue: change.old, newValue: change.new))
                }
            }
        }
    }

    /// Adds an observer of later changes; with `initial`, also calls it now with the current value, before
    /// any later change. Returns `nil`, after ending it, if the config is already gone.
    func addObserver(
        initial: Bool, onChange: @escaping @Sendable (Value) -> Void, onEnd: (@Sendable () -> Void)? = nil
    ) -> UInt64? {
        let ended = locked { binding?.context.observationEnded ?? false }
        storable_config_spin_lock(spinLock)
        // The initial value goes out under the lock, so that no later change can overtake it.
        if initial { onChange(value) }
        guard !ended else {
            storable_config_spin_unlock(spinLock)
            onEnd?()
            return nil
        }
        let identifier = ObservationToken.nextIdentifier()
        let state = observationState()
        state.observers[identifier] = ObservationState<Value>.Observer(
            since: state.changeCount, onChange: onChange, onEnd: onEnd)
        observerCount = state.observers.count
        storable_config_spin_unlock(spinLock)
        return identifier
    }

    func removeObserver(_ identifier: UInt64) {
        // Released after the lock: the observer's closure may own the last reference to something whose
        // deinit removes another observer of this setting.
        let removed = locked {
            defer { observerCount = observation?.observers.count ?? 0 }
            return observation?.observers.removeValue(forKey: identifier)
        }
        withExtendedLifetime(removed) {}
    }
}

extension Setting: SettingBox {
    func bind(schema: ConfigSchema, index: Int, context: ConfigContext) {
        let traits = ValueTraits<Value>.shared
        let binding = SettingBinding(context: context, schema: schema, index: index)
        locked {
            self.traits = traits
            removesOnNil = traits.isNil?(declaredDefault) ?? false
            self.binding = binding
            bindingForReads = Unmanaged.passUnretained(binding)
        }
    }

    func endObservation() {
        guard locked({ observerCount > 0 }) else { return }
        let ended = locked {
            defer {
                observation?.observers = [:]
                observerCount = 0
            }
            return Array(observation?.observers.values ?? [:].values)
        }
        for observer in ended { observer.onEnd?() }
    }

    func showPendingReset() {
        applyPending(defaultValue, isSet: false)
    }

    func declarationProblem() -> String? {
        let traits = ValueTraits<Value>.shared
        do {
            _ = try traits.decode(try traits.encode(defaultValue))
            return nil
        } catch {
            return "values of type \(traits.typeName) cannot be stored and read back "
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
        let traits = ValueTraits<Value>.shared
        do {
            apply(try traits.decode(stored), isSet: true, version: version, stored: stored)
        } catch {
            StorableConfig.report(
                .typeMismatch(key: key, expectedType: traits.typeName, found: stored, reason: "\(error)"))
            apply(defaultValue, isSet: true, version: version, stored: nil)
        }
    }
}
