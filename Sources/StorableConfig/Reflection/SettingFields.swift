@_spi(Reflection) import Swift

/// A property wrapper object that a config keeps in a stored property and that holds one setting: ``Setting``
/// itself, or ``Records``.
protocol SettingField: AnyObject {
    /// The setting held by the wrapper object at `object`, a reference to an instance of this type.
    static func settingBox(in object: UnsafeRawPointer) -> any SettingBox
}

/// Where a config class keeps its settings: for each, in schema order, the offset of its stored property in an
/// instance and the wrapper class stored there.
///
/// Reflecting an instance with `Mirror` costs microseconds per setting, so the first instance of a class is
/// reflected and later instances read their settings from these offsets, which the Swift runtime's field
/// metadata gives. What is read depends on the instance alone: not on the thread or task that runs the
/// initializer, nor on what other code made meanwhile (an initializer that suspends before `super.init` may
/// resume on another thread, while other configs are being made).
struct SettingFields: Sendable {
    // A metatype and two integers, never changed.
    private struct Location: @unchecked Sendable {
        let offset: Int
        let type: any SettingField.Type
        let typeIdentifier: ObjectIdentifier
    }

    private let locations: [Location]

    /// Finds the stored property of each of `reflected`, the settings that `Mirror` found in `config`, or returns
    /// `nil` if one cannot be told apart (the config then reflects every instance).
    init?(of config: StorableConfig, reflected: [ReflectedSetting]) {
        var candidates: [(offset: Int, type: ObjectIdentifier)] = []
        // 1 is `.classType`; the option set's static members are mutable globals that Swift 6 refuses.
        let walked = _forEachField(of: type(of: config), options: _EachFieldOptions(rawValue: 1)) {
            _, offset, type, _ in
            candidates.append((offset, ObjectIdentifier(type)))
            return true
        }
        guard walked else { return nil }
        let base = UnsafeRawPointer(Unmanaged.passUnretained(config).toOpaque())
        var locations: [Location] = []
        locations.reserveCapacity(reflected.count)
        for setting in reflected {
            let objectType: AnyObject.Type = type(of: setting.field)
            guard let fieldType = objectType as? any SettingField.Type else { return nil }
            let object = UnsafeRawPointer(Unmanaged.passUnretained(setting.field).toOpaque())
            // Only properties declared as the wrapper's class hold one reference, which is safe to load.
            let matches = candidates.filter { candidate in
                candidate.type == ObjectIdentifier(objectType)
                    && base.load(fromByteOffset: candidate.offset, as: UnsafeRawPointer?.self) == object
            }
            guard matches.count == 1 else { return nil }
            locations.append(
                Location(offset: matches[0].offset, type: fieldType, typeIdentifier: ObjectIdentifier(objectType)))
        }
        self.locations = locations
    }

    /// The settings of `config`, an instance of the class these locations were found in, in schema order; `nil`
    /// if a property does not hold an object of the class found there in the first instance.
    func settings(of config: StorableConfig) -> [any SettingBox]? {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(config).toOpaque())
        var settings: [any SettingBox] = []
        settings.reserveCapacity(locations.count)
        for location in locations {
            guard let object = base.load(fromByteOffset: location.offset, as: UnsafeRawPointer?.self),
                ObjectIdentifier(type(of: Unmanaged<AnyObject>.fromOpaque(object).takeUnretainedValue()))
                    == location.typeIdentifier
            else { return nil }
            settings.append(location.type.settingBox(in: object))
        }
        return settings
    }
}

extension Setting: SettingField {
    static func settingBox(in object: UnsafeRawPointer) -> any SettingBox {
        Unmanaged<Setting<Value>>.fromOpaque(object).takeUnretainedValue()
    }
}

extension Records: SettingField {
    static func settingBox(in object: UnsafeRawPointer) -> any SettingBox {
        Unmanaged<Records<Record>>.fromOpaque(object).takeUnretainedValue().wrappedValue
    }
}
