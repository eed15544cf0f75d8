import StorableConfig

extension StorableConfig {
    /// A JSON Schema (draft 2020-12) of the settings file that `configs` write: one flat object whose
    /// properties are the settings' full keys, each with its type, default, range (`minimum`/`maximum`), the
    /// allowed values of a `String`- or `Int`-backed `CaseIterable` enum, `writeOnly` for a secret, and as its
    /// `description` what the declaration says (`@Setting(description:)`), or else `<configName>.<name>`. Other
    /// keys stay allowed (the file may hold other programs' settings). Editors use it to complete and check
    /// hand edits:
    ///
    /// ```swift
    /// import StorableConfigSchema
    ///
    /// try StorableConfig.jsonSchema(of: [app, twitter]).write(to: schemaURL, atomically: true, encoding: .utf8)
    /// ```
    public static func jsonSchema(of configs: [StorableConfig], title: String = "Settings") -> String {
        var properties: [String: StoredValue] = [:]
        for config in configs {
            for setting in config.allSettings {
                var schema = JSONSchemaMembers.of(setting)
                schema["description"] = .string(
                    setting.settingDescription ?? "\(type(of: config).configName).\(setting.name)")
                properties[setting.key] = .dictionary(schema)
            }
        }
        let root: [String: StoredValue] = [
            "$schema": .string("https://json-schema.org/draft/2020-12/schema"), "title": .string(title),
            "type": .string("object"), "properties": .dictionary(properties), "additionalProperties": .bool(true),
        ]
        return StoredValue.dictionary(root).jsonText(pretty: true)
    }
}
