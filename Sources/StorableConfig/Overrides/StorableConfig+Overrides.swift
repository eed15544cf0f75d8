extension StorableConfig {
    private static let defaultOverridesStorage = Locked(ConfigOverrides.none)

    /// The overrides of every config class that does not choose its own with ``overrides``: none unless set.
    /// Set it at start-up, before the first config is created:
    ///
    /// ```swift
    /// StorableConfig.defaultOverrides = .environmentAndArguments()
    /// ```
    public static var defaultOverrides: ConfigOverrides {
        get { ConfigDefaults.current?.overrides ?? defaultOverridesStorage.withLock { $0 } }
        set { defaultOverridesStorage.withLock { $0 = newValue } }
    }

    /// The problems that the config's overrides had when it was created: each an
    /// ``StorableConfigError/invalidOverride(origin:key:value:reason:)`` (also reported to
    /// ``errorHandler``). Empty when every override was valid.
    public var overrideProblems: [StorableConfigError] {
        layers?.problems ?? []
    }

    /// Throws one error listing every invalid override of `configs`, for a server that would rather refuse to
    /// start than run on a fallback value.
    ///
    /// ```swift
    /// try StorableConfig.checkOverrides(of: [server, limits])
    /// ```
    /// - Throws: ``InvalidOverrides``.
    public static func checkOverrides(of configs: [StorableConfig]) throws(InvalidOverrides) {
        var problems = configs.flatMap(\.overrideProblems)
        var seen: Set<String> = []
        problems = problems.filter { seen.insert($0.description).inserted }
        problems += unknownSourceNames(of: configs).filter { seen.insert($0.description).inserted }
        if !problems.isEmpty { throw InvalidOverrides(problems: problems) }
    }

    /// The settings that environment variables or launch arguments override, one per line: name, value
    /// (`<redacted>` for a secret) and where it comes from. Empty when nothing is overridden.
    public var overrideReport: String {
        zip(schema.names, settings).compactMap { name, setting -> String? in
            guard let origin = setting.overrideOrigin else { return nil }
            let value = setting.isRedacted ? StorableConfigError.redacted : setting.valueText
            return "\(type(of: self).configName).\(name) = \(value) (from the \(origin))"
        }.joined(separator: "\n")
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
