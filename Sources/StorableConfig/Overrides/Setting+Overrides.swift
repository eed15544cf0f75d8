/// An override's value and where it comes from. A class, so that reading whether a setting has one looks up
/// no generic type.
final class SettingOverride<Value> {
    let value: Value
    let source: SettingSource
    /// `environment variable APP_CONFIG_USER_NAME`, `launch argument --app-config-user-name`.
    let origin: String

    init(value: Value, source: SettingSource, origin: String) {
        self.value = value
        self.source = source
        self.origin = origin
    }
}

/// Text that an environment variable or launch argument gives for a setting.
struct OverrideCandidate {
    let source: SettingSource
    /// `environment variable APP_CONFIG_USER_NAME`, `launch argument --app-config-user-name`.
    let origin: String
    let text: String
}

extension Setting {
    /// Where the value comes from: a launch argument, an environment variable, the store, or the default.
    public var source: SettingSource {
        if let overridden { return overridden.source }
        return isSet ? .stored : .default
    }

    /// Whether an environment variable or launch argument overrides the stored value.
    public var isOverridden: Bool { overridden != nil }

    /// Takes the first candidate, in precedence order, that parses and passes the setting's check, and returns
    /// a problem for each one before it that does not.
    func takeOverride(from candidates: [OverrideCandidate]) -> [StorableConfigError] {
        var problems: [StorableConfigError] = []
        for candidate in candidates {
            let problem: String
            do {
                let value = try parse(candidate.text)
                if let error = validationError(value), case .invalidValue(_, _, let reason) = error {
                    problem = reason
                } else {
                    let override = SettingOverride(value: value, source: candidate.source, origin: candidate.origin)
                    // Made outside the lock, for a setting whose declaration needed none.
                    let extras = extras ?? SettingExtras(declaredKeys: .derived, rules: nil)
                    let replaced = locked { () -> Value in
                        extras.overridden = override
                        self.extras = extras
                        assignmentHasRules = true
                        defer { self.value = value }
                        return self.value
                    }
                    withExtendedLifetime(replaced) {}
                    return problems
                }
            } catch {
                problem = "it is not \(TypeName.withArticle(valueTypeName)) (expected \(expectedFormat))"
            }
            problems.append(
                .invalidOverride(
                    origin: candidate.origin, key: key, value: isSecret ? StorableConfigError.redacted : candidate.text,
                    reason: problem))
        }
        return problems
    }

    /// Reports, once, that an assignment to an overridden setting is stored but not read.
    func reportAssignment(overriddenBy override: SettingOverride<Value>) {
        let first = locked { () -> Bool in
            guard let extras, !extras.reportedOverriddenAssignment else { return false }
            extras.reportedOverriddenAssignment = true
            return true
        }
        if first { StorableConfig.report(.assignedWhileOverridden(key: key, origin: override.origin)) }
    }

    var isBool: Bool { Value.self == Bool.self }

    var overrideDescription: (source: SettingSource, origin: String)? {
        overridden.map { ($0.source, $0.origin) }
    }
}
