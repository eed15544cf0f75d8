/// The stored values of one or more configs as one versioned JSON document, to export and import.
///
/// ```swift
/// let text = ConfigDocument(exporting: [app, twitter]).jsonText()   // a backup, or settings to hand over
/// let document = try ConfigDocument(jsonText: text)
/// try document.apply(to: [app, twitter], mode: .replace)
/// ```
///
/// The document covers every config it was made from, even one with nothing stored, and holds, by property
/// name, the values that are stored (not defaults), and each config's schema version:
///
/// ```json
/// {
///   "configs": {
///     "AppConfig": { "namespace": "com.example.app", "schemaVersion": 0, "settings": { "userName": "nkysu1" } },
///     "TwitterConfig": { "namespace": "com.example.app", "schemaVersion": 0, "settings": {} }
///   },
///   "format": "StorableConfig settings",
///   "formatVersion": 1
/// }
/// ```
///
/// Importing is all or nothing: see ``apply(to:mode:)``.
public struct ConfigDocument: Sendable, Equatable {
    /// The value of the document's `format` member.
    public static let format = "StorableConfig settings"
    /// The version of the document format that this library writes and reads.
    public static let formatVersion = 1

    /// One config's part of a document.
    public struct Config: Sendable, Equatable {
        /// The namespace of the config's keys, for reference; importing does not use it.
        public var namespace: String
        /// The schema version of the config's stored values (see ``StorableConfig/migrations``).
        public var schemaVersion: Int
        /// The stored values, by property name.
        public var settings: [String: StoredValue]
        /// The names of the secret settings that the export left out; an import leaves them alone.
        public var secretsOmitted: [String]

        /// A config's part, with its stored values by property name.
        public init(
            namespace: String, schemaVersion: Int, settings: [String: StoredValue], secretsOmitted: [String] = []
        ) {
            self.namespace = namespace
            self.schemaVersion = schemaVersion
            self.settings = settings
            self.secretsOmitted = secretsOmitted
        }
    }

    /// How an import treats settings that the document does not set.
    public enum ImportMode: Sendable, Equatable {
        /// They keep their values.
        case merge
        /// Every setting of every config the document covers goes back to its default unless the document
        /// sets it.
        case replace
    }

    /// The configs the document covers, by ``StorableConfig/configName``.
    public var configs: [String: Config]

    /// A document with `configs`.
    public init(configs: [String: Config]) {
        self.configs = configs
    }

    /// The stored values of `configs`, read from their stores now. Secret settings are left out, and listed
    /// as left out (`secretsOmitted`), unless `includingSecrets` is set.
    /// - Throws: ``ConfigDocumentError/unreadable(_:)`` if a store cannot be read;
    ///   ``ConfigDocumentError/ambiguous(_:)`` if two of `configs` share a ``StorableConfig/configName`` (two
    ///   classes of one name, or one class over two stores), since a document names each config once.
    public init(exporting configs: [StorableConfig], includingSecrets: Bool = false) throws(ConfigDocumentError) {
        var covered: [String: Config] = [:]
        var coveredBy: [String: StorableConfig] = [:]
        for config in configs {
            let type = type(of: config)
            if let earlier = coveredBy[type.configName] {
                if earlier.isSameConfig(as: config) { continue }
                throw .ambiguous(
                    "two of the configs are named '\(type.configName)' (\(earlier.identityDescription) and "
                        + "\(config.identityDescription)); a document names each config once")
            }
            coveredBy[type.configName] = config
            let stored: [String: StoredValue]
            do {
                // Through the hub: a config whose keys another class moved reads them where they are now.
                stored = try config.context.hub.values(forKeys: config.keys, in: config.store)
            } catch {
                throw .unreadable("the store of \(type.configName) cannot be read: \(error)")
            }
            var settings: [String: StoredValue] = [:]
            var omitted: [String] = []
            for (index, (name, key)) in zip(config.schema.names, config.schema.keys).enumerated() {
                if config.settings[index].isSecret, !includingSecrets {
                    omitted.append(name)
                } else if let value = stored[key] {
                    settings[name] = value
                }
            }
            // The version the values are in: the store's, which a newer program may have written.
            let version = type.storedSchemaVersion(in: config.store) ?? type.schemaVersion
            covered[type.configName] = Config(
                namespace: type.namespace, schemaVersion: version, settings: settings,
                secretsOmitted: omitted)
        }
        self.configs = covered
    }

    /// Reads a document from its JSON text.
    /// - Throws: ``ConfigDocumentError/unreadable(_:)`` if `jsonText` is not JSON, and
    ///   ``ConfigDocumentError/notADocument(_:)`` if it is JSON of another shape.
    public init(jsonText: String) throws(ConfigDocumentError) {
        let parsed: StoredValue
        do {
            parsed = try StoredValue(jsonText: jsonText)
        } catch {
            throw .unreadable("it is not JSON: \(error)")
        }
        guard case .dictionary(let root) = parsed else {
            throw .notADocument("it is \(parsed.kindDescription), not an object")
        }
        guard root["format"] == .string(Self.format) else {
            throw .notADocument("its \"format\" member is not \"\(Self.format)\"")
        }
        guard case .int(let version)? = root["formatVersion"], version >= 1, version <= Self.formatVersion else {
            throw .notADocument("its \"formatVersion\" is not a version from 1 to \(Self.formatVersion)")
        }
        guard case .dictionary(let members)? = root["configs"] else {
            throw .notADocument("it has no \"configs\" object")
        }
        var configs: [String: Config] = [:]
        for (name, member) in members {
            guard case .dictionary(let fields) = member, case .string(let namespace)? = fields["namespace"],
                case .int(let schemaVersion)? = fields["schemaVersion"],
                case .dictionary(let settings)? = fields["settings"]
            else {
                throw .notADocument(
                    "the config \"\(name)\" needs \"namespace\" (text), \"schemaVersion\" (a whole number) and "
                        + "\"settings\" (an object)")
            }
            var omitted: [String] = []
            switch fields["secretsOmitted"] {
            case nil: break
            case .array(let names)?:
                for case .string(let secret) in names { omitted.append(secret) }
            case _?:
                throw .notADocument("the config \"\(name)\" has a \"secretsOmitted\" that is not a list of names")
            }
            configs[name] = Config(
                namespace: namespace, schemaVersion: Int(schemaVersion), settings: settings, secretsOmitted: omitted)
        }
        self.configs = configs
    }

    /// The document as pretty-printed JSON text, keys sorted.
    public func jsonText() -> String {
        var members: [String: StoredValue] = [:]
        for (name, config) in configs {
            var fields: [String: StoredValue] = [
                "namespace": .string(config.namespace), "schemaVersion": .int(Int64(config.schemaVersion)),
                "settings": .dictionary(config.settings),
            ]
            if !config.secretsOmitted.isEmpty {
                fields["secretsOmitted"] = .array(config.secretsOmitted.map(StoredValue.string))
            }
            members[name] = .dictionary(fields)
        }
        let root: StoredValue = .dictionary([
            "format": .string(Self.format), "formatVersion": .int(Int64(Self.formatVersion)),
            "configs": .dictionary(members),
        ])
        return root.jsonText(pretty: true)
    }
}

/// Why a ``ConfigDocument`` cannot be read or applied; nothing was changed.
public enum ConfigDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text or a store cannot be read: not JSON, or an unreadable store.
    case unreadable(String)
    /// The text is JSON, but not a settings document.
    case notADocument(String)
    /// Entries of the document do not fit the configs: each problem names the config and setting.
    case doesNotFit([String])
    /// Two configs given to an export share a name: two classes of one ``StorableConfig/configName``, or one
    /// class over two stores.
    case ambiguous(String)

    /// A full sentence, listing every problem.
    public var description: String {
        switch self {
        case .unreadable(let reason): "The settings document cannot be read: \(reason)."
        case .notADocument(let reason): "This is not a StorableConfig settings document: \(reason)."
        case .ambiguous(let reason): "The settings document cannot be made: \(reason)."
        case .doesNotFit(let problems):
            "The settings document does not fit, so nothing was imported:\n"
                + problems.map { "  - \($0)" }.joined(separator: "\n")
        }
    }
}

extension StorableConfig {
    /// Whether `other` is of the same class and bound to the same storage: the same settings, the same values.
    func isSameConfig(as other: StorableConfig) -> Bool {
        type(of: self) == type(of: other) && context.hub === other.context.hub
    }

    /// "com.example.app.AppConfig on <store>", to tell two configs of one name apart in a message.
    var identityDescription: String {
        "\(type(of: self).namespace).\(type(of: self).configName) (\(String(reflecting: type(of: self)))) on \(store)"
    }
}
