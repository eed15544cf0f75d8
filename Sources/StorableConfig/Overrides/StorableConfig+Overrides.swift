extension StorableConfig {
    private static let defaultOverridesStorage = Locked(ConfigOverrides.none)

    /// The overrides of every config class that does not choose its own with ``overrides``: none unless set.
    /// Set it at start-up, before the first config is created:
    ///
    /// ```swift
    /// StorableConfig.defaultOverrides = .environmentAndArguments()
    /// ```
    public static var defaultOverrides: ConfigOverrides {
        get { defaultOverridesStorage.withLock { $0 } }
        set { defaultOverridesStorage.withLock { $0 = newValue } }
    }

    /// The problems that the config's overrides had when it was created: each an
    /// ``StorableConfigError/invalidOverride(origin:key:value:reason:)`` (also reported to
    /// ``errorHandler``). Empty when every override was valid.
    public var overrideProblems: [StorableConfigError] {
        overrideProblemsStorage.withLock { $0 }
    }

    /// Throws one error listing every invalid override of `configs`, for a server that would rather refuse to
    /// start than run on a fallback value.
    ///
    /// ```swift
    /// try StorableConfig.checkOverrides(of: [server, limits])
    /// ```
    /// - Throws: ``InvalidOverrides``.
    public static func checkOverrides(of configs: [StorableConfig]) throws(InvalidOverrides) {
        let problems = configs.flatMap(\.overrideProblems)
        if !problems.isEmpty { throw InvalidOverrides(problems: problems) }
    }

    /// The settings that environment variables or launch arguments override, one per line: name, value
    /// (`<redacted>` for a secret) and where it comes from. Empty when nothing is overridden.
    public var overrideReport: String {
        zip(schema.names, settings).compactMap { name, setting -> String? in
            guard let override = setting.overrideDescription else { return nil }
            let value = setting.isSecret ? StorableConfigError.redacted : setting.valueText
            return "\(type(of: self).configName).\(name) = \(value) (from the \(override.origin))"
        }.joined(separator: "\n")
    }

    /// Reads the overrides of every setting, before the stored values are loaded.
    func applyOverrides() {
        let overrides = type(of: self).overrides
        guard overrides.environment != nil || overrides.arguments != nil else { return }
        let configName = type(of: self).configName
        var problems: [StorableConfigError] = []
        for (name, setting) in zip(schema.names, settings) {
            var candidates: [OverrideCandidate] = []
            if let arguments = overrides.arguments {
                let option = ConfigOverrides.argumentName(configName: configName, name: name)
                switch OverrideNames.text(for: option, in: arguments, isBool: setting.isBool) {
                case .some(.some(let text)):
                    candidates.append(
                        OverrideCandidate(source: .argument, origin: "launch argument \(option)", text: text))
                case .some(.none):
                    problems.append(
                        .invalidOverride(
                            origin: "launch argument \(option)", key: schema.keys[schema.names.firstIndex(of: name)!],
                            value: "", reason: "it needs a value: \(option) <value> or \(option)=<value>"))
                case .none:
                    break
                }
            }
            if let environment = overrides.environment {
                let variable = overrides.variableName(configName: configName, name: name)
                if let text = environment[variable] {
                    candidates.append(
                        OverrideCandidate(source: .environment, origin: "environment variable \(variable)", text: text))
                }
            }
            if !candidates.isEmpty { problems += setting.takeOverride(from: candidates) }
        }
        guard !problems.isEmpty else { return }
        overrideProblemsStorage.withLock { $0 = problems }
        for problem in problems { StorableConfig.report(problem) }
    }
}

/// Every invalid override of the configs that ``StorableConfig/checkOverrides(of:)`` checked.
public struct InvalidOverrides: Error, Sendable, CustomStringConvertible {
    /// One ``StorableConfigError/invalidOverride(origin:key:value:reason:)`` per invalid override.
    public let problems: [StorableConfigError]

    /// The problems, one per line.
    public var description: String {
        "\(problems.count) override(s) are not valid:\n" + problems.map { "- \($0)" }.joined(separator: "\n")
    }
}
