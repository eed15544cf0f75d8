import Foundation

@testable import StorableConfig

/// The check of the `assign-parsing` fuzz target (Fuzz/Targets/AssignParsingTarget.swift), also run by
/// `swift test` over its seed corpus and every input that ever failed it: values typed at the demo's `set`,
/// given in an environment variable or a launch argument.
///
/// The input's first byte picks a setting of ``FuzzTypesConfig`` or ``FuzzMigratedConfig``; the rest is the text.
/// - ``AnySetting/assign(parsing:)`` never crashes; it takes the text, or throws `invalidText` or
///   `invalidValue` and leaves the setting as it was.
/// - What it takes, the setting shows as ``AnySetting/valueText``, which `assign(parsing:)` reads back as the
///   same stored value; a config opened afresh on the store reads it too.
/// - The same text in the setting's environment variable, or its launch argument `--name=text`, overrides the
///   setting with the same value exactly when `assign(parsing:)` takes it, and is reported otherwise.
/// - The text, split at NUL bytes into launch arguments, never crashes the arguments' reader, and
///   `removingSettingArguments(from:of:)` keeps them in order.
enum AssignParsingFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        guard let selector = input.first else { return nil }
        let text = String(decoding: input.dropFirst(), as: UTF8.self)
        let store = InMemoryStore()
        let settings = FuzzTypesConfig(store: store).allSettings + FuzzMigratedConfig(store: store).allSettings
        let index = Int(selector) % settings.count
        let setting = settings[index]
        let before = store.allValues
        let taken: StoredValue?
        do {
            try setting.assign(parsing: text)
            taken = setting.storedValue
        } catch let error as StorableConfigError {
            switch error {
            case .invalidText, .invalidValue: break
            default: return "\(setting.name): assign(parsing:) threw \(error)"
            }
            if setting.isSet || store.allValues != before { return "\(setting.name): a refused text was stored" }
            taken = nil
        } catch {
            return "\(setting.name): assign(parsing:) threw \(error)"
        }
        if let taken, let problem = roundTripFailure(of: setting, taken, index: index, store: store) {
            return problem
        }
        if index < FuzzTypesConfig(store: InMemoryStore()).allSettings.count,
            let problem = overrideFailure(index: index, text: text, taken: taken)
        {
            return problem
        }
        return argumentsFailure(text)
    }

    private static func roundTripFailure(
        of setting: any AnySetting, _ taken: StoredValue, index: Int, store: InMemoryStore
    ) -> String? {
        let shown = setting.valueText
        let fresh = InMemoryStore()
        let again = (FuzzTypesConfig(store: fresh).allSettings + FuzzMigratedConfig(store: fresh).allSettings)[index]
        do {
            try again.assign(parsing: shown)
        } catch {
            return "\(setting.name): its value text \(shown.debugDescription) does not read back: \(error)"
        }
        if let difference = FuzzSupport.difference(taken, again.storedValue), !sameValue(setting, again) {
            return
                "\(setting.name): its value text \(shown.debugDescription) reads back as another value: \(difference)"
        }
        let reopened = (FuzzTypesConfig(store: store).allSettings + FuzzMigratedConfig(store: store).allSettings)[index]
        if let difference = FuzzSupport.difference(taken, reopened.storedValue), !sameValue(setting, reopened) {
            return "\(setting.name): a config opened afresh reads another value: \(difference)"
        }
        return nil
    }

    private static func overrideFailure(index: Int, text: String, taken: StoredValue?) -> String? {
        let name = FuzzTypesConfig(store: InMemoryStore()).allSettings[index].name
        let configName = FuzzOverriddenConfig.configName
        let variable = ConfigOverrides.none.variableName(configName: configName, name: name)
        let option = ConfigOverrides.argumentName(configName: configName, name: name)
        let ways: [(ConfigOverrides, SettingLayer)] = [
            (ConfigOverrides(environment: [variable: text], arguments: nil), .environment),
            (ConfigOverrides(environment: nil, arguments: ["program", option + "=" + text]), .argument),
        ]
        for (overrides, source) in ways {
            let config = FuzzOverrides.with(overrides) { FuzzOverriddenConfig(store: InMemoryStore()) }
            let setting = config.allSettings[index]
            if let taken {
                guard setting.layer == source, config.overrideProblems.isEmpty else {
                    return "\(name): the \(source) override was not taken: \(config.overrideProblems)"
                }
                if let difference = FuzzSupport.difference(taken, setting.storedValue),
                    !sameValue(setting, FuzzTypesConfig(store: InMemoryStore()).allSettings[index], assigning: taken)
                {
                    return "\(name): the \(source) override reads another value: \(difference)"
                }
            } else if setting.layer == source || config.overrideProblems.isEmpty {
                return "\(name): the \(source) override was taken, or not reported, though assign(parsing:) refused it"
            }
        }
        return nil
    }

    private static func argumentsFailure(_ text: String) -> String? {
        let arguments = ["program"] + text.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
        let config = FuzzOverrides.with(ConfigOverrides(environment: nil, arguments: arguments)) {
            FuzzOverriddenConfig(store: InMemoryStore())
        }
        let kept = ConfigOverrides.removingSettingArguments(from: arguments, of: [config])
        var rest = arguments[...]
        for argument in kept {
            guard let found = rest.firstIndex(of: argument) else {
                return "removingSettingArguments gave \(kept) from \(arguments)"
            }
            rest = rest[(found + 1)...]
        }
        return nil
    }

    /// Whether two settings hold equal Swift values: a `Set`'s stored array may list its members in any order.
    /// With `assigning`, `right` is first given that stored value.
    private static func sameValue(
        _ left: any AnySetting, _ right: any AnySetting, assigning stored: StoredValue? = nil
    ) -> Bool {
        guard let left = left as? any EquatableValueSetting else { return false }
        return left.hasEqualValue(to: right, assigning: stored)
    }
}

/// A setting whose values can be compared.
private protocol EquatableValueSetting {
    func hasEqualValue(to other: any AnySetting, assigning stored: StoredValue?) -> Bool
}

extension Setting: EquatableValueSetting where Value: Equatable {
    fileprivate func hasEqualValue(to other: any AnySetting, assigning stored: StoredValue?) -> Bool {
        guard let other = other as? Setting<Value> else { return false }
        if let stored {
            guard let value = try? ValueTraits<Value>.shared.decode(stored) else { return false }
            other.wrappedValue = value
        }
        return wrappedValue == other.wrappedValue
    }
}
