import StorableConfig

/// The AppConfig specification file (`specfile.xml`) of configs: the settings an administrator may set through
/// MDM managed app configuration, each with its type, default, label and description, for an MDM console to
/// offer exactly the settings the app reads.
///
/// A build script writes it next to the app:
///
/// ```swift
/// let configs = [AppConfig(store: InMemoryStore())]
/// let specification = AppConfigSpecification(of: configs, bundleIdentifier: "com.example.app")
/// try specification.xmlText.write(to: URL(fileURLWithPath: "specfile.xml"), atomically: true, encoding: .utf8)
/// for omitted in specification.omittedSettings { print("left out: \(omitted)") }
/// ```
///
/// Each setting is a key named `<configName>.<property>` (`AppConfig.serverURL`), the name a managed
/// configuration dictionary gives it. Its element follows its type: `boolean`, `integer` (every integer type),
/// `float` (`Double`, `Float`, `Decimal`), `string` (`String`, `URL`), `date`, and `stringArray`, `integerArray`
/// or `floatArray` for an array or set of those; an enum with `String` or `Int` raw values that is
/// `CaseIterable` is a `select` of its raw values (a `multiselect` for an array of them). An optional takes its
/// wrapped type's element, with `<constraint nullable="true"/>`; a range (`@Setting(in:)`) of numbers gives
/// `min` and `max`. The label is the property's name in words (`Server URL`), and the description what
/// `@Setting(description:)` says.
///
/// Left out, each with a comment in the file and an entry in ``omittedSettings``: secret settings (an MDM
/// payload is plain text on the device), types the format has no element for (`Data`, structures,
/// dictionaries, arrays of dates or Booleans), record collections, and a setting whose name holds a character
/// that XML cannot carry. A default the format cannot hold (an integer beyond 32 bits, text with a control
/// character) is left out of its key, with a comment, and the key kept.
public struct AppConfigSpecification: Sendable, Hashable {
    /// A setting that the file leaves out, and why.
    public struct OmittedSetting: Sendable, Hashable, CustomStringConvertible {
        /// The setting's name in the file: `<configName>.<property>`.
        public let keyName: String
        /// Why it is left out, as a phrase: "it is secret, …".
        public let reason: String

        /// "`keyName`: `reason`".
        public var description: String { "\(keyName): \(reason)" }
    }

    /// The file's text: UTF-8 XML, ending with a line feed.
    public let xmlText: String
    /// The settings that the file leaves out, in the order of `configs` and their declarations.
    public let omittedSettings: [OmittedSetting]

    /// Makes the specification file of `configs`.
    ///
    /// - Parameters:
    ///   - configs: The configs whose settings an administrator may set; the values they hold do not matter, only
    ///     their declarations (a config over an ``InMemoryStore`` does).
    ///   - bundleIdentifier: The app's bundle identifier, which the console matches the file to
    ///     (`com.example.app`).
    ///   - version: The file's version, a whole number from 1, which grows with each change to the settings it
    ///     lists.
    ///   - locale: The language that labels and descriptions are written in, as `presentation`'s
    ///     `defaultLocale` and each `language`'s `value` give it.
    public init(of configs: [StorableConfig], bundleIdentifier: String, version: Int = 1, locale: String = "en-US") {
        var writer = AppConfigWriter(locale: locale)
        for config in configs {
            let configName = type(of: config).configName
            for setting in config.allSettings {
                writer.add(keyName: "\(configName).\(setting.name)", label: setting.name, setting: setting)
            }
        }
        xmlText = writer.document(bundleIdentifier: bundleIdentifier, version: version)
        omittedSettings = writer.omitted
    }
}

/// Writes the file's `dict` and `presentation`, one setting at a time.
struct AppConfigWriter {
    let locale: String
    var dictLines: [String] = []
    var fieldLines: [String] = []
    var omitted: [AppConfigSpecification.OmittedSetting] = []
    private var keyNames: Set<String> = []

    init(locale: String) {
        self.locale = locale
    }

    mutating func add(keyName: String, label: String, setting: any AnySetting) {
        func omit(_ reason: String) {
            omitted.append(.init(keyName: keyName, reason: reason))
            dictLines.append("    <!-- \(XMLText.comment("\(keyName) is left out: \(reason)")) -->")
        }
        guard !keyNames.contains(keyName) else {
            return omit("another setting of these configs has the same name, and each name may appear once")
        }
        guard let name = XMLText.escaped(keyName, inAttribute: true) else {
            return omit("its name holds a control character, which XML cannot carry")
        }
        var key: AppConfigKey
        switch AppConfigKey.of(setting) {
        case .failure(let omission): return omit(omission.reason)
        case .success(let described): key = described
        }
        let options = (key.options ?? []).compactMap { XMLText.escaped($0, inAttribute: true) }
        guard options.count == (key.options?.count ?? 0) else {
            return omit("a value it takes holds a control character, which XML cannot carry")
        }
        var values = key.defaultValues.compactMap { XMLText.escaped($0) }
        if values.count < key.defaultValues.count {
            values = []
            key.defaultProblem = "it holds a control character, which XML cannot carry"
        }
        keyNames.insert(keyName)
        if let problem = key.defaultProblem {
            dictLines.append("    <!-- \(XMLText.comment("\(keyName) has no default here: \(problem)")) -->")
        }
        var line = "    <\(key.element) keyName=\"\(name)\">"
        if !values.isEmpty {
            line += "<defaultValue>" + values.map { "<value>\($0)</value>" }.joined() + "</defaultValue>"
        }
        if !key.constraint.isEmpty {
            line += "<constraint" + key.constraint.map { " \($0.name)=\"\($0.value)\"" }.joined() + "/>"
        }
        dictLines.append(line + "</\(key.element)>")
        fieldLines.append("    <field keyName=\"\(name)\" type=\"\(key.fieldType)\">")
        fieldLines.append("      <label>\(language(Self.label(label)))</label>")
        if let description = setting.settingDescription {
            fieldLines.append("      <description>\(language(description))</description>")
        }
        if let optionTexts = key.options, !optionTexts.isEmpty {
            fieldLines.append("      <options>")
            for (value, text) in zip(options, optionTexts) {
                fieldLines.append("        <option value=\"\(value)\">\(language(Self.label(text)))</option>")
            }
            fieldLines.append("      </options>")
        }
        fieldLines.append("    </field>")
    }

    /// `text` in the file's language: `<language value="en-US">text</language>`.
    private func language(_ text: String) -> String {
        "<language value=\"\(XMLText.readable(locale, inAttribute: true))\">\(XMLText.readable(text))</language>"
    }

    /// A name in words, the first capitalized: `serverURL` → `Server URL`, `system` → `System`.
    static func label(_ name: String) -> String {
        var words = ""
        var previous: Character?
        for character in name {
            // A new word where a capital follows a lower-case letter: `serverURL` → `server URL`.
            if let previous, previous.isLowercase && character.isUppercase { words.append(" ") }
            words.append(character)
            previous = character
        }
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// The whole file.
    func document(bundleIdentifier: String, version: Int) -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<managedAppConfiguration>",
            "  <version>\(version)</version>",
            "  <bundleId>\(XMLText.readable(bundleIdentifier))</bundleId>",
            "  <dict>",
        ]
        lines += dictLines
        lines.append("  </dict>")
        // The format wants at least one field in a presentation: none is given when no setting is listed.
        if !fieldLines.isEmpty {
            lines.append("  <presentation defaultLocale=\"\(XMLText.readable(locale, inAttribute: true))\">")
            lines += fieldLines
            lines.append("  </presentation>")
        }
        lines.append("</managedAppConfiguration>")
        return lines.joined(separator: "\n") + "\n"
    }
}
