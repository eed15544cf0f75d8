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
            let declaringClass = current.subjectType
            levels.append(
                current.children.compactMap { child in
                    guard let label = child.label,
                        let setting = (child.value as? any SettingBox)
                            ?? (child.value as? any WrapsSettingBox)?.settingBox
                    else { return nil }
                    // A wrapper's storage is reflected as `_name`.
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    return ReflectedSetting(name: name, declaringType: declaringClass, setting: setting)
                })
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }
}

/// A setting found by reflection.
struct ReflectedSetting {
    let name: String
    /// The class that declares the property.
    let declaringType: Any.Type
    let setting: any SettingBox

    /// The unqualified name of the class that declares the property, for messages.
    var declaringClass: String { unqualifiedName(of: declaringType) }
}

/// The name of `type` without its module, as `String(describing:)` gives it.
func unqualifiedName(of type: Any.Type) -> String {
    String(describing: type)
}
