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
/// `Value` is any `Codable & Sendable` type. Reading a setting returns the value held in memory, under the
/// setting's own lock, and never touches the store. Assigning writes through to the store and, before
/// returning, updates every other config bound to the same storage.
///
/// Assigning `nil` to an optional setting whose default is `nil` removes the stored value; if the default
/// is not `nil`, an explicit "no value" is stored instead (so that the setting still reads `nil` after a
/// relaunch). ``reset()`` is what brings a default back.
@propertyWrapper
public final class Setting<Value: Codable & Sendable>: @unchecked Sendable {
    // Every mutable property below is guarded by `lock`, which is this setting's alone (`binding`,
    // `bindingForReads`, `traits` and `removesOnNil` are written once, by `bind`, in the config's initializer,
    // before any other thread can reach the setting, so writes read them without it). Under it the code
    // only copies and assigns: it never allocates, takes another lock, or runs code the user wrote (`==`,
    // `encode(to:)`, observers, a value's `deinit`). A value it replaces is released after the unlock.
    @usableFromInline let lock = Lock()
    // All guarded by the lock, so the dynamic exclusivity checks (dozens of instructions per access in
    // unspecialised code) would add nothing: `@exclusivity(unchecked)` throughout.
    @usableFromInline @exclusivity(unchecked) var value: Value
    @exclusivity(unchecked) var declaredDefault: Value
    @exclusivity(unchecked) var hasStoredValue = false
    /// `nil` removes the stored value, rather than storing "no value", when the default is `nil`.
    @exclusivity(unchecked) var removesOnNil = false
    /// The store version this value came from; older deliveries are ignored, so concurrent writers and
    /// configs converge on the store's last value.
    @exclusivity(unchecked) var version: UInt64 = 0
    @exclusivity(unchecked) var binding: SettingBinding?
    /// The same binding, read on every get without retaining it; the strong `binding` keeps it alive.
    @usableFromInline @exclusivity(unchecked) var bindingForReads: Unmanaged<SettingBinding>?
    /// Unowned: traits are made once per type and cached for the process's lifetime, so every write reads them
    /// without retaining them.
    @exclusivity(unchecked) unowned(unsafe) var traits: ValueTraits<Value>?
    /// Observers and undelivered changes, made when first needed (most settings are never observed).
    @exclusivity(unchecked) var observation: ObservationState<Value>?
    /// How many observers `observation` holds, readable without touching its generic type.
    @exclusivity(unchecked) var observerCount = 0
    /// Set when the config goes away; no observer can be added after it.
    @exclusivity(unchecked) var observationEnded = false

    /// Creates a setting whose default is `wrappedValue`.
    public init(wrappedValue: Value) {
        value = wrappedValue
        declaredDefault = wrappedValue
        SettingRegistration.register(self)
    }

    /// The setting's current value.
    @inlinable
    public var wrappedValue: Value {
        get {
            lock.lock()
            let current = value
            lock.unlock()
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
        locked { binding }?.key ?? ""
    }

    /// The name of the property that declares the setting; empty for a `Setting` that is not a property of a
    /// ``StorableConfig``.
    public var name: String {
        locked { binding }?.name ?? ""
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
            let replaced = locked { () -> Value in
                defer { value = declaredDefault }
                return value
            }
            withExtendedLifetime(replaced) {}
            return
        }
        // Bound, so `bind` has set the traits (before the binding).
        write(defaultValue, stored: nil, through: binding, traits: traits!)
    }

    @inline(__always)
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    @usableFromInline
    func assign(_ newValue: Value) {
        // `bind` sets the traits and the binding once, in the config's initializer, before anyone else can
        // reach this setting, and nothing changes them after: read without the lock (as the getter reads
        // `bindingForReads`), and without retaining them (the traits are cached for the process's lifetime,
        // the binding is held by `binding`).
        guard let traits, let binding = bindingForReads else {
            assignBeforeBinding(newValue)
            return
        }
        binding._withUnsafeGuaranteedRef { binding -> Void in
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
            write(newValue, stored: stored, through: binding, traits: traits)
        }
    }

    /// Not bound yet: the subclass's initializer is assigning before `super.init`, which sets the default,
    /// exactly like the declaration's initial value does. (A setting that is no config's property is never
    /// bound.) Out of line, to keep `assign` free of its locals.
    @inline(never)
    private func assignBeforeBinding(_ newValue: Value) {
        lock.lock()
        guard binding == nil else {
            // Bound meanwhile, on this thread: cannot happen in a config's initializer, but stay correct.
            lock.unlock()
            assign(newValue)
            return
        }
        let replacedValue = value
        let replacedDefault = declaredDefault
        value = newValue
        declaredDefault = newValue
        lock.unlock()
        withExtendedLifetime(replacedValue) {}
        withExtendedLifetime(replacedDefault) {}
    }

    /// Writes `stored` (`nil` removes the key) and then holds `newValue`; inside a batch on this thread, holds
    /// it at once and leaves the write, and telling the observers, to the end of the batch.
    /// (`newValue` also goes to the other configs on the storage as the typed value, sparing them a decode;
    /// they use it only with a stored value. Not an `Optional<Value>`, whose metadata unspecialised code would
    /// look up on every write.)
    private func write(
        _ newValue: Value, stored: StoredValue?, through binding: SettingBinding, traits: ValueTraits<Value>
    ) {
        let isSet = stored != nil
        if let version = binding.context.writeOne(key: binding.key, stored: stored, typedValue: newValue) {
            applyWritten(newValue, isSet: isSet, version: version, stored: stored, binding: binding, traits: traits)
        } else {
            let change = SettingChange(key: binding.key, stored: stored, typedValue: newValue)
            binding.context.deferToBatch(change) { [self] version in
                apply(newValue, isSet: isSet, version: version, stored: stored)
            }
            applyPending(newValue, isSet: isSet)
        }
    }

    /// ``apply(_:isSet:version:stored:)`` for this setting's own write, with its binding and traits at hand.
    /// The usual case, with no observer of this setting or its config and no batch state, swaps the value in
    /// under the lock (moves only: nothing is retained or released there) and tells the Observation framework
    /// after.
    private func applyWritten(
        _ newValue: Value, isSet: Bool, version newVersion: UInt64, stored: StoredValue?, binding: SettingBinding,
        traits: ValueTraits<Value>
    ) {
        var held = newValue
        lock.lock()
        guard observation == nil, observerCount == 0, !binding.context.hasChangeObservers else {
            lock.unlock()
            applyInOrder(newValue, isSet: isSet, version: newVersion, stored: stored)
            return
        }
        guard newVersion >= version else {
            lock.unlock()
            return
        }
        version = newVersion
        swap(&value, &held)
        hasStoredValue = isSet
        lock.unlock()
        // `held` is now the value replaced, released at the end of this function, after the unlock. Only the
        // Observation framework needs to hear of a change, and only once it has tracked a setting: compare
        // (`==` is the value type's own code, and not free) only then.
        if ObservedSetting.isTracked,
            Self.hasChanged(from: held, to: newValue, stored: stored, traits: traits, listening: false)
        {
            binding.observationDidChange()
        }
    }

    /// Shows a value assigned inside a batch at once; the batch's write gives it its version and tells the
    /// observers, once.
    func applyPending(_ newValue: Value, isSet: Bool) {
        let state = observationState()
        let replaced = locked { () -> Value? in
            let current = value
            value = newValue
            hasStoredValue = isSet
            if state.valueBeforeBatch == nil {
                state.valueBeforeBatch = .some(current)
                return nil
            }
            return current
        }
        withExtendedLifetime(replaced) {}
    }

    /// Returns the observation state, making it, outside the lock, on first use.
    func observationState() -> ObservationState<Value> {
        if let existing = locked({ observation }) { return existing }
        let made = ObservationState<Value>()
        return locked {
            if let observation { return observation }
            observation = made
            return made
        }
    }

    /// Takes `newValue` unless the setting already holds a newer version (`nil`: a change kept in memory
    /// only), then tells the observers if the value changed. `stored` is its stored form, when known.
    func apply(_ newValue: Value, isSet: Bool, version newVersion: UInt64?, stored: StoredValue?) {
        lock.lock()
        // The usual case, with no observer of this setting or its config and no batch state: no queue.
        if let binding, let traits, observation == nil, observerCount == 0, !binding.context.hasChangeObservers {
            if let newVersion {
                guard newVersion >= version else {
                    lock.unlock()
                    return
                }
                version = newVersion
            }
            let old = value
            value = newValue
            hasStoredValue = isSet
            lock.unlock()
            // Only the Observation framework needs to hear of a change.
            if Self.hasChanged(from: old, to: newValue, stored: stored, traits: traits, listening: false) {
                binding.observationDidChange()
            }
            withExtendedLifetime(old) {}
            return
        }
        lock.unlock()
        applyInOrder(newValue, isSet: isSet, version: newVersion, stored: stored)
    }

    /// ``apply(_:isSet:version:stored:)`` when someone listens, or a batch is under way: the change is queued
    /// under the lock and delivered in order after it.
    @inline(never)
    private func applyInOrder(_ newValue: Value, isSet: Bool, version newVersion: UInt64?, stored: StoredValue?) {
        // Made before the lock is taken, when someone listens: the queued change and the state that holds it.
        var node: PendingChange<Value>?
        var state: ObservationState<Value>?
        while true {
            lock.lock()
            if let newVersion, newVersion < version {
                lock.unlock()
                return
            }
            guard let binding, let traits else {
                let replaced = value
                value = newValue
                hasStoredValue = isSet
                lock.unlock()
                withExtendedLifetime(replaced) {}
                return
            }
            let listening = observerCount > 0 || binding.context.hasChangeObservers
            if listening, node == nil || state == nil {
                lock.unlock()
                node = node ?? PendingChange(new: newValue, stored: stored)
                state = observationState()
                continue
            }
            if let newVersion { version = newVersion }
            let current = value
            var old = current
            if let observation, case .some(let before) = observation.valueBeforeBatch {
                old = before
                observation.valueBeforeBatch = nil
            }
            value = newValue
            hasStoredValue = isSet
            guard listening, let node, let state else {
                lock.unlock()
                withExtendedLifetime(current) {}
                // Nobody to tell in order: only the Observation framework needs to hear of a change.
                if Self.hasChanged(from: old, to: newValue, stored: stored, traits: traits, listening: false) {
                    binding.observationDidChange()
                }
                return
            }
            // Queued in version order under the lock; whether it is a change at all is decided by the
            // delivering thread, outside the lock, because `==` and `encode(to:)` are the value type's own code.
            state.changeCount += 1
            node.number = state.changeCount
            node.old = old
            state.enqueue(node)
            let mustDeliver = !state.isDelivering
            state.isDelivering = true
            lock.unlock()
            withExtendedLifetime(current) {}
            if mustDeliver { deliverChanges(binding, traits: traits) }
            return
        }
    }

    /// Whether `new` differs from `old`: by `==` for `Equatable` values, else, when someone listens, by stored
    /// form (a change that only Observation hears of is taken as a change without encoding). Called without
    /// the lock.
    static func hasChanged(
        from old: Value, to new: Value, stored: StoredValue?, traits: ValueTraits<Value>, listening: Bool
    ) -> Bool {
        if let isEqual = traits.isEqual { return !isEqual(old, new) }
        guard listening else { return true }
        return (try? traits.encode(old)) != (stored ?? (try? traits.encode(new)))
    }
}
extension Setting: SettingBox {
    func bind(schema: ConfigSchema, index: Int, context: ConfigContext) {
        let traits = ValueTraits<Value>.shared
        let binding = SettingBinding(context: context, schema: schema, index: index)
        let removesOnNil = traits.isNil?(defaultValue) ?? false
        locked {
            self.traits = traits
            self.removesOnNil = removesOnNil
            self.binding = binding
            bindingForReads = Unmanaged.passUnretained(binding)
        }
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
