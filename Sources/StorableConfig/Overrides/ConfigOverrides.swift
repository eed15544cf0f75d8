import Foundation

/// Where settings may be overridden from, for one run of the program: environment variables and launch
/// arguments. An override is read in place of the stored value and is never written to the store.
///
/// Turn it on for every config, in one line, at start-up:
///
/// ```swift
/// StorableConfig.defaultOverrides = .environmentAndArguments()             // APP_CONFIG_USER_NAME, --app-config-user-name
/// StorableConfig.defaultOverrides = .environmentAndArguments(prefix: "DEMO_")  // DEMO_APP_CONFIG_USER_NAME
/// ```
///
/// or for one class:
///
/// ```swift
/// final class ServerConfig: StorableConfig {
///     override class var overrides: ConfigOverrides { .environmentAndArguments() }
///     @Setting var port = 8080
/// }
/// ```
///
/// Names follow apple/swift-configuration's: the config's `configName` and the property name, camelCase split
/// into words, upper-cased and joined by `_` for a variable (after the prefix), lower-cased and joined by `-`
/// after `--` for an argument. Read precedence: argument, then environment variable, then stored value, then
/// default. See Docs/ServerConfiguration.md.
public struct ConfigOverrides: Sendable {
    /// The environment to read, or `nil` for none.
    public var environment: [String: String]?
    /// The launch arguments to read (the first is the program's name and is skipped), or `nil` for none.
    public var arguments: [String]?
    /// What every environment variable's name starts with.
    public var prefix: String

    /// Overrides from `environment` and `arguments`, with variable names after `prefix`.
    public init(environment: [String: String]?, arguments: [String]?, prefix: String = "") {
        self.environment = environment
        self.arguments = arguments
        self.prefix = prefix
    }

    /// No overrides: the default.
    public static let none = ConfigOverrides(environment: nil, arguments: nil)

    /// The process's environment variables and launch arguments.
    public static func environmentAndArguments(
        prefix: String = "", environment: [String: String] = ProcessInfo.processInfo.environment,
        arguments: [String] = CommandLine.arguments
    ) -> ConfigOverrides {
        ConfigOverrides(environment: environment, arguments: arguments, prefix: prefix)
    }

    /// The process's environment variables only.
    public static func environment(
        prefix: String = "", _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ConfigOverrides {
        ConfigOverrides(environment: environment, arguments: nil, prefix: prefix)
    }

    /// The process's launch arguments only.
    public static func arguments(_ arguments: [String] = CommandLine.arguments) -> ConfigOverrides {
        ConfigOverrides(environment: nil, arguments: arguments)
    }

    /// The environment variable for the setting `name` of a config named `configName`:
    /// `AppConfig`, `userName` → `APP_CONFIG_USER_NAME`, after the prefix.
    public func variableName(configName: String, name: String) -> String {
        prefix + OverrideNames.environment([configName, name])
    }

    /// The launch argument for the setting `name` of a config named `configName`:
    /// `AppConfig`, `userName` → `--app-config-user-name`.
    public static func argumentName(configName: String, name: String) -> String {
        OverrideNames.argument([configName, name])
    }

    /// `arguments` without the options that name a setting of `configs` (and their values), for the
    /// program's own parser: what names no setting is left as it was, in order.
    public static func removingSettingArguments(from arguments: [String], of configs: [StorableConfig]) -> [String] {
        let names = Dictionary(
            configs.flatMap { config in
                zip(config.schema.names, config.settings).map { name, setting in
                    (argumentName(configName: type(of: config).configName, name: name), setting)
                }
            }, uniquingKeysWith: { first, _ in first })
        var kept: [String] = []
        var next = 0
        OverrideNames.forEachOption(in: arguments, from: 0, isBool: { names[$0]?.isBool }) { taken, _ in
            kept += arguments[next..<taken.lowerBound]
            next = taken.upperBound
        }
        // What follows the last option taken is the program's, as it is: after a `--`, all of it.
        return kept + arguments[next...]
    }
}

/// Which layer gives a setting's value: the managed app configuration, a launch argument, an environment variable, a
/// file source, the store, or the declared default (``AnySetting/layer``).
public enum SettingLayer: String, Sendable, Hashable, CustomStringConvertible {
    /// The managed app configuration that an administrator pushes gives it, above every other layer (see
    /// ``ConfigSource/managedAppConfiguration(_:)``): ``AnySetting/isManaged``.
    case managed
    /// A launch argument overrides it.
    case argument
    /// An environment variable overrides it.
    case environment
    /// A file source gives it: a `.env` file, a directory of files or a JSON file (see ``ConfigSource``), above
    /// the store (it overrides the stored value) or below it (nothing is stored, and it replaces the default).
    /// ``AnySetting/origin`` names the file.
    case file
    /// A ``ConfigProvider`` you wrote gives it (see ``ConfigSource/provider(_:secret:)``), above the store or below
    /// it. ``AnySetting/origin`` names the provider and the name it gave the value by.
    case provider
    /// The store holds a value (even one of the wrong type, which reads as the default).
    case stored
    /// Nothing is stored: the declared default.
    case `default`

    /// `managed`, `argument`, `environment`, `file`, `provider`, `stored` or `default`.
    public var description: String { rawValue }
}

/// The naming rules of apple/swift-configuration 1.4.0's `EnvironmentKeyEncoder` and `CLIKeyEncoder`.
enum OverrideNames {
    /// Each component's camelCase boundaries become `_`, then all is upper-cased, characters that are not
    /// letters or digits become `_`, and the components are joined by `_`.
    static func environment(_ components: [String]) -> String {
        components.map { component in
            words(component).joined(separator: "_").uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }
                .joined()
        }.joined(separator: "_")
    }

    /// Each component's camelCase boundaries become `-`, all lower-cased, joined by `-`, after `--`.
    static func argument(_ components: [String]) -> String {
        "--" + components.map { words($0).joined(separator: "-").lowercased() }.joined(separator: "-")
    }

    /// The words of a camelCase name, split where a lower-case letter is followed by an upper-case one:
    /// `serverURL` → `server`, `URL`.
    static func words(_ name: String) -> [String] {
        var words: [String] = []
        var word = ""
        var previous: Character?
        for character in name {
            if let previous, previous.isLowercase && character.isUppercase {
                words.append(word)
                word = ""
            }
            word.append(character)
            previous = character
        }
        if !word.isEmpty || words.isEmpty { words.append(word) }
        return words
    }

    /// Whether the option before `index` takes `arguments[index]` as its value: always, unless the setting is a
    /// `Bool` and the next argument is not `true` or `false` (a bare flag means `true`), or there is none, or
    /// it is another `--` option.
    static func takesNext(_ arguments: [String], at index: Int, isBool: Bool) -> Bool {
        guard index < arguments.count else { return false }
        let next = arguments[index]
        if isBool { return next == "true" || next == "false" }
        return !next.hasPrefix("--")
    }

    /// The text given for `option` in `arguments` (after the program name, before a `--` that ends the options):
    /// `--option value`, `--option=value`, or a bare `--option` for a `Bool`, which is `true`. The last one given
    /// wins. `.some(nil)`: the option was given without the value it needs.
    static func text(for option: String, in arguments: [String], isBool: Bool) -> String?? {
        var found: String??
        forEachOption(in: arguments, from: 1, isBool: { $0 == option ? isBool : nil }) { _, text in
            found = .some(text)
        }
        return found
    }

    /// Calls `body` for each option in `arguments`, from `start` up to a `--` that ends the options, that `isBool`
    /// knows (it answers `nil` for the others, which are passed over one argument at a time), with the arguments
    /// it takes and the text it gives: `--option value`, `--option=value`, or a bare `--option` for a `Bool`,
    /// which is `true`; `nil` when the option needs a value and has none.
    static func forEachOption(
        in arguments: [String], from start: Int, isBool: (String) -> Bool?, _ body: (Range<Int>, String?) -> Void
    ) {
        var index = start
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            // Split at the first "=" byte: a value that starts with a combining mark makes one character of it and
            // the "=".
            let equals = argument.utf8.firstIndex(of: UInt8(ascii: "="))
            let option = equals.map { String(argument[..<$0]) } ?? argument
            if argument.hasPrefix("--"), let isBool = isBool(option) {
                if let equals {
                    let value = argument.utf8[argument.utf8.index(after: equals)...]
                    body(index..<index + 1, String(decoding: value, as: UTF8.self))
                } else if takesNext(arguments, at: index + 1, isBool: isBool) {
                    body(index..<index + 2, arguments[index + 1])
                    index += 1
                } else {
                    body(index..<index + 1, isBool ? "true" : nil)
                }
            }
            index += 1
        }
    }
}

/// The earlier name of ``SettingLayer``.
@available(*, deprecated, renamed: "SettingLayer")
public typealias SettingSource = SettingLayer
