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
        var mirror = Mirror(reflecting: self)
        while mirror.subjectType != StorableConfig.self {
            var level: [ReflectedSetting] = []
            for case (let label?, let value) in mirror.children {
                guard let setting = (value as? any SettingBox) ?? (value as? any WrapsSettingBox)?.settingBox else {
                    continue
                }
                level.append(ReflectedSetting(label: label, declaringType: mirror.subjectType, setting: setting))
            }
            levels.append(level)
            guard let superclassMirror = mirror.superclassMirror else { break }
            mirror = superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }
}

/// A setting found by reflection.
struct ReflectedSetting {
    /// The property's name as `Mirror` gives it: a wrapper's storage is reflected as `_name`.
    let label: String
    /// The class that declares the property.
    let declaringType: Any.Type
    let setting: any SettingBox

    /// The property's name.
    var name: String { label.hasPrefix("_") ? String(label.dropFirst()) : label }

    /// Whether the property's name is `name`; compares without making a string (every instance compares its
    /// settings with its class's cached schema).
    func isNamed(_ name: String) -> Bool {
        guard label.utf8.first == UInt8(ascii: "_") else { return label == name }
        return label.utf8.count == name.utf8.count + 1 && label.hasSuffix(name)
    }

    /// The unqualified name of the class that declares the property, for messages.
    var declaringClass: String { unqualifiedName(of: declaringType) }
}

/// The name of `type` without its module, as `String(describing:)` gives it.
func unqualifiedName(of type: Any.Type) -> String {
    String(describing: type)
}
