import Foundation
import StorableConfig
import StorableConfigSchema
import Testing

/// `storable-config-demo schema`: the settings file validates against it with a standard validator (python's
/// `jsonschema`, which `.ci/run` installs when it is missing), and a bad hand edit does not.
struct JSONSchemaTests {
    @Test func theSchemaDescribesTypesDefaultsRangesEnumsAndSecrets() throws {
        let schema = StorableConfig.jsonSchema(of: [SchemaConfig(store: InMemoryStore())])
        guard case .dictionary(let root) = try StoredValue(jsonText: schema),
            case .dictionary(let properties)? = root["properties"],
            case .dictionary(let volume)? = properties["schema.SchemaConfig.volume"],
            case .dictionary(let theme)? = properties["schema.SchemaConfig.theme"],
            case .dictionary(let token)? = properties["schema.SchemaConfig.token"]
        else {
            Issue.record("unexpected schema \(schema)")
            return
        }
        #expect(root["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(root["additionalProperties"] == .bool(true))
        #expect(volume["type"] == .string("number"))
        #expect(volume["default"] == .double(0.8))
        #expect(volume["minimum"] == .int(0) || volume["minimum"] == .double(0))
        #expect(volume["maximum"] == .int(1) || volume["maximum"] == .double(1))
        #expect(theme["enum"] == .array([.string("system"), .string("light"), .string("dark")]))
        #expect(token["writeOnly"] == .bool(true))
        #expect(token["default"] == nil)
    }

    /// A bound beyond `Int64.max` is stored as an unsigned number, and is a number to JSON Schema too.
    @Test func aRangeBeyondInt64MaxIsDescribedAsMinimumAndMaximum() throws {
        let schema = StorableConfig.jsonSchema(of: [SchemaConfig(store: InMemoryStore())])
        guard case .dictionary(let root) = try StoredValue(jsonText: schema),
            case .dictionary(let properties)? = root["properties"],
            case .dictionary(let quota)? = properties["schema.SchemaConfig.quotaBytes"]
        else {
            Issue.record("unexpected schema \(schema)")
            return
        }
        #expect(quota["type"] == .string("integer"))
        #expect(quota["minimum"] == .int(1) || quota["minimum"] == .uint(1))
        #expect(quota["maximum"] == .uint(UInt64.max))
        #expect(schema.contains("18446744073709551615"))
    }

    @Test func theDemosSettingsFileValidatesAndABadHandEditDoesNot() throws {
        let home = DemoHome()
        try home.run()
        try home.run("set", "app.volume", "0.5")
        try home.run("set", "app.nickname", "null")
        try home.run("set", "app.window", #"{"width": 1024, "height": 768}"#)
        try home.run("set", "twitter.apiToken", "t0ken")
        try home.run("set", "budget.incomes", #"[{"id":"s","name":"Salary","amount":300000,"order":0}]"#)
        let schema = home.directory.file("schema.json")
        try Data(try home.run("schema").output.utf8).write(to: schema)
        let settings = try Data(contentsOf: home.settingsFile)
        #expect(try validate(settings, schema: schema) == "valid")
        var object = try home.settings()
        object["storable-config-demo.AppConfig.volume"] = 2
        #expect(try validate(JSONSerialization.data(withJSONObject: object), schema: schema).contains("maximum"))
        object = try home.settings()
        object["storable-config-demo.AppConfig.theme"] = "purple"
        #expect(try validate(JSONSerialization.data(withJSONObject: object), schema: schema).contains("purple"))
    }

    /// Runs python's jsonschema on `document`: "valid", or the validator's message.
    private func validate(_ document: Data, schema: URL) throws -> String {
        let documentURL = schema.deletingLastPathComponent().appendingPathComponent("document-\(UUID()).json")
        try document.write(to: documentURL)
        let script = """
            import json, sys
            try:
                import jsonschema
            except ImportError:
                print("python's jsonschema is not installed: pip install jsonschema"); sys.exit(3)
            schema = json.load(open(sys.argv[1])); document = json.load(open(sys.argv[2]))
            jsonschema.Draft202012Validator.check_schema(schema)
            errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
            print("valid" if not errors else "; ".join(errors))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, schema.path, documentURL.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

final class SchemaConfig: StorableConfig {
    override class var namespace: String { "schema" }
    @Setting(in: 0...1) var volume = 0.8
    @Setting var theme = SchemaTheme.system
    @Setting(secret: true) var token = "s"
    @Setting(in: 1...UInt64.max) var quotaBytes: UInt64 = 1
}

enum SchemaTheme: String, Codable, Sendable, CaseIterable {
    case system, light, dark
}
