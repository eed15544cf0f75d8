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
/// `Value` is any `Codable & Sendable` type. Reading a setting returns the value held in memory, under its
/// config's lock, and never touches the store. Assigning writes through to the store and, before
/// returning, updates every other config bound to the same storage.
///
/// Assigning `nil` to an optional setting whose default is `nil` removes the stored value; if the default
/// is not `nil`, an explicit "no value" is stored instead (so that the setting still reads `nil` after a
/// relaunch). ``reset()`` is what brings a default back.
@propertyWrapper
public final class Setting<Value: Codable & Sendable>: @unchecked Sendable {
    // Every mutable property below is guarded by `lock`, the lock of the setting's config (`binding`,
    // `traits` and `removesOnNil` are written once, by `bind`, and `extras` once by the declaration or an
    // override, in the config's initializer, before any other thread can reach the setting, so writes read them
    // without it). The stored properties are laid out so that a plain setting of a word-sized value takes one
    // 112-byte allocation (Performance.md, "memory per setting"). Under it the code
    // only copies and assigns: it never allocates, takes another lock, or runs code the user wrote (`==`,
    // `encode(to:)`, observers, a value's `deinit`). A value it replaces is released after the unlock.
    /// The lock that guards the setting: its config's, which every setting of the config shares (set by `bind`,
    /// in the config's initializer, before anyone else can reach the setting), and before that one lock shared by
    /// every setting that no config has bound. One lock per config rather than per setting: a config's settings
    /// can take the values of one change together, and a setting costs no lock of its own. A function that takes
    /// it reads it once (`let lock = self.lock`): each read of a stored `var` is an exclusivity check and a retain.
    var lock = unboundSettingsLock
    var value: Value
    var declaredDefault: Value
    /// The store version this value came from; older deliveries are ignored, so concurrent writers and
    /// configs converge on the store's last value.
    var version: UInt64 = 0
    var binding: SettingBinding?
    /// How values of this type are encoded, decoded and compared: made once per type and cached.
    var traits: ValueTraits<Value>?
    /// The value of this setting's own assignment while its store call runs (`pendingNumber` not 0), which reads
    /// give, so that code that the store runs inside its call reads it. Observers hear only of `value`. Not an
    /// optional: a read of `Value?` in the library's unspecialised code looks up its generic metadata, which
    /// doubled a read's cost. It keeps the last pending value until the next assignment replaces it.
    var pendingValue: Value
    /// Which assignment `pendingValue` is, by number (0: none shown), so that only it takes its value away.
    var pendingNumber: UInt64 = 0
    /// Observers and undelivered changes, made when first needed (most settings are never observed).
    var observation: ObservationState<Value>?
    /// What the declaration says beyond the default (keys, a check, secrecy) and an override: `nil` for a plain
    /// `@Setting var x = 0` that nothing overrides, which so spends one reference on them (see SettingExtras).
    /// Set in the initializer, or once in the config's initializer by an override, before the config is attached
    /// to its storage's hub or returned, and only read afterwards, so it is read without the lock.
    var extras: SettingExtras<Value>?
    // The small ones last, together, so that they share the object's last word.
    /// How many observers `observation` holds, readable without touching its generic type.
    var observerCount: Int32 = 0
    var hasStoredValue = false
    /// `nil` removes the stored value, rather than storing "no value", when the default is `nil`.
    var removesOnNil = false
    /// Set when the config goes away; no observer can be added after it.
    var observationEnded = false
    /// Whether the pending value is stored (not a removal), which ``isSet`` gives while it is shown.
    var pendingIsSet = false

    /// Creates a setting whose default is `wrappedValue`.
    public init(wrappedValue: Value) {
        value = wrappedValue
        declaredDefault = wrappedValue
        pendingValue = wrappedValue
    }

    /// Creates a setting with what its declaration says: see `Setting+Declaration.swift`.
    init(wrappedValue: Value, declaredKeys: DeclaredKeys, rules: SettingRules<Value>?) {
        value = wrappedValue
        declaredDefault = wrappedValue
        pendingValue = wrappedValue
        if !declaredKeys.isDerived || rules != nil {
            extras = SettingExtras(declaredKeys: declaredKeys, rules: rules)
            extras?.assignmentHasRules = rules?.check != nil
        }
    }

    /// Whether an assignment has more to do than encode and write: a check, or an override to keep.
    var assignmentHasRules: Bool { extras?.assignmentHasRules ?? false }

    /// Whether a layer (an override, a file source) may give the value: every value then has the layers resolved
    /// under the lock, in the same critical section as the version (see `layeredValueLocked`).
    var hasLayers: Bool { extras?.hasLayers ?? false }

    /// The setting's current value.
    public var wrappedValue: Value {
        get {
            let lock = self.lock
            lock.lock()
            let current = pendingNumber == 0 ? value : pendingValue
            lock.unlock()
            if let binding { binding.recordAccess() }
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

    /// The keys under which the value may have been stored before, in search order: see
    /// ``init(wrappedValue:key:previousNames:previousKeys:validate:secret:description:)``. Empty for a `Setting`
    /// that is not a property of a ``StorableConfig``.
    public var previousKeys: [String] {
        locked { binding }.map { $0.schema.earlierKeys[$0.index] } ?? []
    }

    /// The value the setting reads when nothing is stored: its declared initial value.
    public var defaultValue: Value {
        locked { declaredDefault }
    }

    /// Whether the store holds a value for this setting (even one of the wrong type).
    public var isSet: Bool {
        locked { pendingNumber == 0 ? hasStoredValue : pendingIsSet }
    }

    /// Removes the stored value, and any value left under the setting's ``previousKeys``, so that the setting
    /// reads its default again.
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
        // Values left under earlier keys too, so that none comes back at the next start.
        let earlier = binding.schema.earlierKeys[binding.index]
        if !earlier.isEmpty {
            _ = binding.context.write(
                earlier.map { key in
                    (SettingChange(key: key, stored: nil, typedValue: nil, isEarlierKey: true), { @Sendable _ in nil })
                })
        }
    }

    @inline(__always)
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        let lock = self.lock
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// The lock of every setting that no config has bound yet (see ``Setting/lock``).
let unboundSettingsLock = Lock()
