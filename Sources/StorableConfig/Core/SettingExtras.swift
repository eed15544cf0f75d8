/// What few settings have, kept out of line: what the declaration says beyond the default, and an override.
///
/// A plain `@Setting var x = 0` uses none of it, and its setting holds one `nil` reference in its place rather
/// than the keys, the check with its bounds, and the override inline, which cost every setting 144 bytes.
final class SettingExtras<Value>: @unchecked Sendable {
    /// The explicit key and earlier names and keys given in the declaration; never changed.
    let declaredKeys: DeclaredKeys
    /// The range or check, and whether the value is secret; `nil` for neither. Never changed.
    let rules: SettingRules<Value>?
    /// The value an environment variable or launch argument gives, read in place of the stored value. Set once,
    /// in the config's initializer before the config is attached to its storage's hub or returned, and only read
    /// afterwards, so it is read without the lock.
    @exclusivity(unchecked) var overridden: SettingOverride<Value>?
    /// Whether an assignment to the overridden setting was reported (once is enough). Guarded by the setting's
    /// lock.
    @exclusivity(unchecked) var reportedOverriddenAssignment = false

    init(declaredKeys: DeclaredKeys, rules: SettingRules<Value>?) {
        self.declaredKeys = declaredKeys
        self.rules = rules
    }
}

extension Setting {
    /// The explicit key and earlier names and keys given in the declaration.
    var declaredKeys: DeclaredKeys { extras?.declaredKeys ?? .derived }

    /// The range or check, and whether the value is secret; `nil` for neither.
    var rules: SettingRules<Value>? { extras?.rules }

    /// The override, if an environment variable or launch argument gives the value.
    var overridden: SettingOverride<Value>? { extras?.overridden }
}
