import Foundation
import Testing

@testable import StorableConfig

struct AnySettingTests {
    func setting(_ name: String, of config: StorableConfig) throws -> any AnySetting {
        try #require(config.allSettings.first { $0.name == name })
    }

    @Test func allSettingsListsEverySettingInDeclarationOrder() {
        let config = DerivedSettings(store: InMemoryStore())
        #expect(config.allSettings.map(\.name) == ["theme", "fontSize"])
        #expect(config.allSettings.map(\.key) == config.keys)
    }

    @Test func valuesAreShownAsTextAPersonTypes() throws {
        let config = MatrixConfig(store: InMemoryStore())
        config.string = "nkysu1"
        config.strings = ["sleep", "eat"]
        config.date = Date(timeIntervalSinceReferenceDate: 0)
        config.theme = .dark
        config.profile = Profile(name: "n", age: 3)
        #expect(try setting("string", of: config).valueText == "nkysu1")
        #expect(try setting("strings", of: config).valueText == #"["sleep","eat"]"#)
        #expect(try setting("date", of: config).valueText == "2001-01-01T00:00:00Z")
        #expect(try setting("theme", of: config).valueText == "dark")
        #expect(try setting("bool", of: config).valueText == "false")
        #expect(try setting("profile", of: config).valueText == #"{"age":3,"name":"n","tags":[]}"#)
        #expect(try setting("optionalInt", of: config).valueText == "null")
        #expect(try setting("theme", of: config).defaultValueText == "light")
        #expect(try setting("strings", of: config).valueTypeName == "[String]")
    }

    /// Found by the `assign-parsing` fuzz target: a `String?` holding the text "null" was shown as `null`, which
    /// reads back as no value, and a `String` holding `"a"` with its quotes was shown bare, which reads back as a.
    @Test func aStringThatReadsAsOtherJSONIsShownQuotedSoThatItReadsBack() throws {
        let config = MatrixConfig(store: InMemoryStore())
        config.greeting = "null"
        config.string = #""a""#
        config.optionalString = "plain"
        #expect(try setting("greeting", of: config).valueText == #""null""#)
        #expect(try setting("string", of: config).valueText == #""\"a\"""#)
        #expect(try setting("optionalString", of: config).valueText == "plain")
        let copy = MatrixConfig(store: InMemoryStore())
        for name in ["greeting", "string", "optionalString"] {
            try setting(name, of: copy).assign(parsing: setting(name, of: config).valueText)
        }
        #expect(copy.greeting == "null")
        #expect(copy.string == #""a""#)
        #expect(copy.optionalString == "plain")
    }

    @Test func textIsParsedAsTheSettingsType() throws {
        let config = MatrixConfig(store: InMemoryStore())
        try setting("bool", of: config).assign(parsing: "true")
        try setting("int", of: config).assign(parsing: "-14")
        try setting("double", of: config).assign(parsing: "2.5")
        try setting("string", of: config).assign(parsing: "true")
        try setting("strings", of: config).assign(parsing: #"["a","b"]"#)
        try setting("theme", of: config).assign(parsing: "system")
        try setting("url", of: config).assign(parsing: "https://example.com/x")
        try setting("date", of: config).assign(parsing: "2026-11-21T09:30:00Z")
        try setting("profile", of: config).assign(parsing: #"{"name": "p", "age": 4, "tags": []}"#)
        try setting("greeting", of: config).assign(parsing: "null")
        #expect(config.bool)
        #expect(config.int == -14)
        #expect(config.double == 2.5)
        #expect(config.string == "true")
        #expect(config.strings == ["a", "b"])
        #expect(config.theme == .system)
        #expect(config.url == URL(string: "https://example.com/x")!)
        #expect(config.date == ISO8601Timestamp.date(from: "2026-11-21T09:30:00Z"))
        #expect(config.profile == Profile(name: "p", age: 4))
        #expect(config.greeting == nil)
    }

    @Test(arguments: [
        ("bool", "yes", "true or false"), ("int", "1.5", "a whole number"), ("int8", "300", "a whole number"),
        ("theme", "purple", "one of: light, dark, system"), ("strings", "a,b", #"JSON such as []"#),
        ("optionalInt", "x", "a whole number, or null for no value"),
    ])
    func textOfTheWrongTypeIsRejectedWithWhatWouldFit(name: String, text: String, expected: String) throws {
        let store = InMemoryStore()
        let config = MatrixConfig(store: store)
        let target = try setting(name, of: config)
        #expect {
            try target.assign(parsing: text)
        } throws: { error in
            let message = (error as? StorableConfigError)?.description ?? ""
            return message.contains(target.key) && message.contains(text) && message.contains(expected)
        }
        #expect(store.allValues.isEmpty)
    }
}
