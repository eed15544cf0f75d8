extension StorableConfig {
    /// Finds the settings with `Mirror`, superclasses' first.
    func reflectSettings() -> [ReflectedSetting] {
        if self is CustomReflectable {
            fatalError(
                StorableConfigError.invalidDeclaration(
                    className: unqualifiedName(of: type(of: self)), property: "customMirror",
                    reason: "a StorableConfig subclass must not adopt CustomReflectable, because its custom "
                        + "mirror hides the @Setting properties from the framework"
                ).description)
        }
        var levels: [[ReflectedSetting]] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror, current.subjectType != StorableConfig.self {
            let declaringClass = unqualifiedName(of: current.subjectType)
            levels.append(
                current.children.compactMap { child in
                    guard let label = child.label,
                        let setting = (child.value as? any SettingBox)
                            ?? (child.value as? any WrapsSettingBox)?.settingBox
                    else { return nil }
                    let field = child.value as AnyObject
                    // A wrapper's storage is reflected as `_name`.
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    return ReflectedSetting(name: name, declaringClass: declaringClass, setting: setting, field: field)
                })
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }
}

/// A setting found by reflection.
struct ReflectedSetting {
    let name: String
    let declaringClass: String
    let setting: any SettingBox
    /// The object in the property: the setting, or the wrapper that holds it.
    let field: AnyObject
}

/// The name of `type` without its module, exactly as `String(describing:)` gives it: for a type, that prints
/// `_typeName(type, qualified: false)`, but only after asking, with dynamic casts, whether the metatype conforms to
/// `TextOutputStreamable`, `CustomStringConvertible`, `CustomDebugStringConvertible` and `CustomReflectable`.
/// A metatype conforms to none, and for a class not seen before each of those casts scans every conformance
/// record in the process: about 0.9 million instructions, a tenth of a first instance's init.
func unqualifiedName(of type: Any.Type) -> String {
    _typeName(type, qualified: false)
}
