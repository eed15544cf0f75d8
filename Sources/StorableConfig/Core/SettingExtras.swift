/// What few settings have, kept out of line: what the declaration says beyond the default, and an override.
///
/// A plain `@Setting var x = 0` uses none of it, and its setting holds one `nil` reference in its place rather
/// than the keys, the check with its bounds, and the override inline, which cost every setting 144 bytes.
final class SettingExtras<Value>: @unchecked Sendable {
    /// The explicit key and earlier names and keys given in the declaration; never changed.
    let declaredKeys: DeclaredKeys
    /// The range or check, and whether the value is secret; `nil` for neither. Never changed.
    let rules: SettingRules<Value>?
    /// The value that a layer above the store gives (a launch argument, an environment variable, a file source
    /// above the store), read in place of the stored value. Guarded by the setting's lock: a live file source
    /// changes it while the config is in use.
    var overridden: SettingOverride<Value>?
    /// The value that a file source below the store gives, read in place of the declared default when nothing is
    /// stored. Guarded by the setting's lock.
    var fallback: SettingOverride<Value>?
    /// The last valid value each file source gave, by the source's identity: a source that now gives a value
    /// that does not fit keeps giving this one. Guarded by the setting's lock.
    var lastGood: [String: SettingOverride<Value>] = [:]
    /// The generation of the sources' contents that the layers above were resolved from: older ones are not
    /// taken. Guarded by the setting's lock.
    var layerGeneration: UInt64 = 0
    /// Which layer gave the value the setting holds: none (the store or the default), the one above the store,
    /// or the one below it. Guarded by the setting's lock; set with the value.
    var appliedLayer = AppliedLayer.none
    /// Whether layers were taken that no value applied since: the thread that took them reads the store next, and
    /// another thread that resolves the same layers meanwhile must not return before it has too (the value it
    /// returns to is read right after). Guarded by the setting's lock; cleared where the layers are applied.
    var layersUnapplied = false
    /// Whether an assignment to the overridden setting was reported (once is enough). Guarded by the setting's
    /// lock.
    var reportedOverriddenAssignment = false
    /// Whether an assignment has more to do than encode and write: a check, or an override to keep. Set once, in
    /// the declaration or the config's initializer, before anyone else can reach the setting.
    var assignmentHasRules = false
    /// Whether a layer may give the value (see ``Setting/hasLayers``). Set once, like `assignmentHasRules`.
    var hasLayers = false

    init(declaredKeys: DeclaredKeys, rules: SettingRules<Value>?) {
        self.declaredKeys = declaredKeys
        self.rules = rules
    }
}

/// Which layer gave a setting's value.
enum AppliedLayer: UInt8 {
    case none
    case above
    case below
}

extension Setting {
    /// The explicit key and earlier names and keys given in the declaration.
    var declaredKeys: DeclaredKeys { extras?.declaredKeys ?? .derived }

    /// The range or check, and whether the value is secret; `nil` for neither.
    var rules: SettingRules<Value>? { extras?.rules }

    /// The override, if a launch argument, an environment variable or a file source above the store gives the
    /// value.
    var overridden: SettingOverride<Value>? {
        guard let extras else { return nil }
        return locked { extras.overridden }
    }
}
