import Foundation
import StorableConfig
import StorableConfigSchema
import Testing

/// `AppConfigSpecification`: the AppConfig community's specfile.xml, read back with Foundation's XML parser.
struct AppConfigSpecificationTests {
    @Test func theIssuesExampleHasExactlyItsShape() {
        let specification = AppConfigSpecification(
            of: [IssueExampleConfig(store: InMemoryStore())], bundleIdentifier: "com.example.app")
        #expect(
            specification.xmlText == """
                <?xml version="1.0" encoding="UTF-8"?>
                <managedAppConfiguration>
                  <version>1</version>
                  <bundleId>com.example.app</bundleId>
                  <dict>
                    <string keyName="AppConfig.serverURL"><defaultValue><value>https://example.com</value></defaultValue></string>
                    <boolean keyName="AppConfig.allowsCamera"><defaultValue><value>true</value></defaultValue></boolean>
                  </dict>
                  <presentation defaultLocale="en-US">
                    <field keyName="AppConfig.serverURL" type="input">
                      <label><language value="en-US">Server URL</language></label>
                    </field>
                    <field keyName="AppConfig.allowsCamera" type="checkbox">
                      <label><language value="en-US">Allows Camera</language></label>
                    </field>
                  </presentation>
                </managedAppConfiguration>

                """)
        #expect(specification.omittedSettings.isEmpty)
    }

    @Test func everySupportedTypeHasItsElementDefaultAndControl() throws {
        let specification = AppConfigSpecification(
            of: [EveryTypeConfig(store: InMemoryStore())], bundleIdentifier: "com.example.every", version: 7,
            locale: "de-DE")
        let read = try #require(SpecificationReader.read(specification.xmlText), "\(specification.xmlText)")
        #expect(read.version == "7")
        #expect(read.bundleIdentifier == "com.example.every")
        #expect(read.defaultLocale == "de-DE")
        typealias Key = SpecificationReader.Key
        let expected: [String: (key: Key, field: String)] = [
            "flag": (Key(element: "boolean", defaults: ["true"]), "checkbox"),
            "count": (Key(element: "integer", defaults: ["42"]), "input"),
            "small": (Key(element: "integer", defaults: ["-8"]), "input"),
            "unsigned": (Key(element: "integer", defaults: ["7"]), "input"),
            "big": (Key(element: "integer"), "input"),
            "ratio": (Key(element: "float", defaults: ["0.25"]), "input"),
            "single": (Key(element: "float", defaults: ["0.1"]), "input"),
            "price": (Key(element: "float", defaults: ["1.25"]), "input"),
            "notANumber": (Key(element: "float", defaults: ["NaN"]), "input"),
            "name": (Key(element: "string", defaults: ["Ann"]), "input"),
            "site": (Key(element: "string", defaults: ["https://example.com/a?b=c&d=e"]), "input"),
            "start": (Key(element: "date", defaults: ["2023-11-14T22:13:20.5Z"]), "datetime"),
            "tags": (Key(element: "stringArray", defaults: ["a", "b"]), "list"),
            "emptyTags": (Key(element: "stringArray"), "list"),
            "uniqueTags": (Key(element: "stringArray", defaults: ["x"]), "list"),
            "numbers": (Key(element: "integerArray", defaults: ["1", "2", "3"]), "list"),
            "weights": (Key(element: "floatArray", defaults: ["0.5", "1.5"]), "list"),
            "flavor": (Key(element: "string", defaults: ["chocolate"]), "select"),
            "level": (Key(element: "integer", defaults: ["2"]), "select"),
            "flavors": (Key(element: "stringArray", defaults: ["vanilla"]), "multiselect"),
            "nickname": (Key(element: "string", constraint: ["nullable": "true"]), "input"),
            "maybeCount": (Key(element: "integer", defaults: ["3"], constraint: ["nullable": "true"]), "input"),
            "volume": (Key(element: "float", defaults: ["0.8"], constraint: ["min": "0.0", "max": "1.0"]), "input"),
            "retries": (Key(element: "integer", defaults: ["3"], constraint: ["min": "1", "max": "10"]), "input"),
        ]
        for (name, entry) in expected {
            let keyName = "EveryTypeConfig.\(name)"
            #expect(read.keys[keyName] == entry.key, "\(keyName)")
            #expect(read.fields[keyName]?.type == entry.field, "\(keyName)")
        }
        #expect(Set(read.keys.keys) == Set(expected.keys.map { "EveryTypeConfig.\($0)" }))
        // The date reads back, through Foundation's own ISO 8601 parser, as the declared default.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(formatter.date(from: "2023-11-14T22:13:20.5Z") == Date(timeIntervalSince1970: 1_700_000_000.5))
        // Labels in words, split as environment variables' names are (where a lower-case letter meets an
        // upper-case one), descriptions as declared, options by raw value.
        #expect(read.fields["EveryTypeConfig.maybeCount"]?.label == "Maybe Count")
        #expect(read.fields["EveryTypeConfig.notANumber"]?.label == "Not ANumber")
        #expect(read.fields["EveryTypeConfig.site"]?.description == "Where the app signs in.")
        #expect(read.fields["EveryTypeConfig.name"]?.description == nil)
        #expect(read.fields["EveryTypeConfig.flavor"]?.options == ["vanilla": "Vanilla", "chocolate": "Chocolate"])
        #expect(read.fields["EveryTypeConfig.level"]?.options == ["1": "1", "2": "2"])
        #expect(read.fields["EveryTypeConfig.flavors"]?.options == ["vanilla": "Vanilla", "chocolate": "Chocolate"])
        // Left out, each said in a comment and in omittedSettings; a default the format cannot hold, in a comment.
        let omitted = Dictionary(uniqueKeysWithValues: specification.omittedSettings.map { ($0.keyName, $0.reason) })
        #expect(
            Set(omitted.keys)
                == Set(["blob", "point", "table", "dates", "token", "notes"].map { "EveryTypeConfig.\($0)" }))
        #expect(omitted["EveryTypeConfig.token"]?.contains("secret") == true)
        #expect(omitted["EveryTypeConfig.blob"]?.contains("a Data") == true)
        #expect(omitted["EveryTypeConfig.notes"]?.contains("records") == true)
        #expect(read.comments.filter { $0.contains("is left out") }.count == omitted.count)
        #expect(read.comments.contains { $0.contains("EveryTypeConfig.big has no default here: 1099511627776 lies") })
        #expect(!specification.xmlText.contains("s3cret"))
    }

    @Test func hostileTextReadsBackExactlyOrVisiblyReplaced() throws {
        let specification = AppConfigSpecification(
            of: [HostileConfig(store: InMemoryStore())], bundleIdentifier: "com.example.hostile")
        let read = try #require(SpecificationReader.read(specification.xmlText), "\(specification.xmlText)")
        let keyName = "Hostile \"&'<>]]> --Config-.motto"
        #expect(read.keys[keyName]?.defaults == [HostileConfig.motto])
        // Control characters that XML cannot carry become U+FFFD in text a person reads.
        let description = HostileConfig.description.replacingOccurrences(of: "\u{1}", with: "\u{FFFD}")
            .replacingOccurrences(of: "\u{7}", with: "\u{FFFD}")
        #expect(read.fields[keyName]?.description == description)
        // A default that holds one is left out of its key, and said so, rather than changed.
        let bell = "Hostile \"&'<>]]> --Config-.bell"
        #expect(read.keys[bell] == SpecificationReader.Key(element: "string"))
        #expect(read.comments.contains { $0.contains("- -Config-.bell has no default here: it holds a control") })
        #expect(read.fields["Hostile \"&'<>]]> --Config-.choice"]?.options == HostileChoice.labels)
        #expect(read.keys["Hostile \"&'<>]]> --Config-.choice"]?.defaults == [HostileChoice.first.rawValue])
    }

    @Test func theJSONSchemaDescribesEachSettingAsDeclared() throws {
        let schema = StorableConfig.jsonSchema(of: [EveryTypeConfig(store: InMemoryStore())])
        guard case .dictionary(let root) = try StoredValue(jsonText: schema),
            case .dictionary(let properties)? = root["properties"],
            case .dictionary(let site)? = properties["spec.EveryTypeConfig.site"],
            case .dictionary(let name)? = properties["spec.EveryTypeConfig.name"],
            case .dictionary(let notes)? = properties["spec.EveryTypeConfig.notes"]
        else {
            Issue.record("unexpected schema \(schema)")
            return
        }
        #expect(site["description"] == .string("Where the app signs in."))
        #expect(name["description"] == .string("EveryTypeConfig.name"))
        #expect(notes["description"] == .string("Notes kept for later."))
    }

    @Test func aDescriptionIsReadThroughTheSettingAndAnySetting() {
        let config = EveryTypeConfig(store: InMemoryStore())
        #expect(config.$site.settingDescription == "Where the app signs in.")
        #expect(config.$name.settingDescription == nil)
        #expect(config.$volume.settingDescription == "How loud, from 0 to 1.")
        #expect(config.$notes.settingDescription == "Notes kept for later.")
        let described = config.allSettings.filter { $0.settingDescription != nil }.map(\.name)
        #expect(described == ["site", "volume", "notes"])
    }
}

final class IssueExampleConfig: StorableConfig {
    override class var configName: String { "AppConfig" }
    @Setting var serverURL = URL(string: "https://example.com")!
    @Setting var allowsCamera = true
}

enum SpecFlavor: String, Codable, Sendable, CaseIterable { case vanilla, chocolate }
enum SpecLevel: Int, Codable, Sendable, CaseIterable {
    case low = 1
    case high = 2
}
struct SpecPoint: Codable, Sendable { var x = 0 }
struct SpecNote: Codable, Identifiable, Sendable {
    var id: String
    var text: String
}

final class EveryTypeConfig: StorableConfig {
    override class var namespace: String { "spec" }
    @Setting var flag = true
    @Setting var count = 42
    @Setting var small: Int8 = -8
    @Setting var unsigned: UInt16 = 7
    @Setting var big: Int64 = 1 << 40
    @Setting var ratio = 0.25
    @Setting var single: Float = 0.1
    @Setting var price = Decimal(string: "1.25")!
    @Setting var notANumber = Double.nan
    @Setting var name = "Ann"
    @Setting(description: "Where the app signs in.") var site = URL(string: "https://example.com/a?b=c&d=e")!
    @Setting var start = Date(timeIntervalSince1970: 1_700_000_000.5)
    @Setting var blob = Data([1, 2])
    @Setting var tags = ["a", "b"]
    @Setting var emptyTags: [String] = []
    @Setting var uniqueTags: Set<String> = ["x"]
    @Setting var numbers = [1, 2, 3]
    @Setting var weights = [0.5, 1.5]
    @Setting var flavor = SpecFlavor.chocolate
    @Setting var level = SpecLevel.high
    @Setting var flavors: [SpecFlavor] = [.vanilla]
    @Setting var nickname: String? = nil
    @Setting var maybeCount: Int? = 3
    @Setting(in: 0...1, description: "How loud, from 0 to 1.") var volume = 0.8
    @Setting(in: 1...10) var retries = 3
    @Setting var point = SpecPoint()
    @Setting var table: [String: Int] = [:]
    @Setting var dates: [Date] = []
    @Setting(secret: true) var token = "s3cret"
    @Records(description: "Notes kept for later.") var notes: RecordCollection<SpecNote>
}

enum HostileChoice: String, Codable, Sendable, CaseIterable {
    case first = "a<b&c>\"d'e"
    case second = "🎉 \u{200F}שלום\u{200F}"

    static let labels = [first.rawValue: "A<b&c>\"d'e", second.rawValue: second.rawValue]
}

final class HostileConfig: StorableConfig {
    static let motto = "<tag attr=\"x\">&amp; ]]> 'quoted' \r\n\ttab 👩‍👩‍👧 \u{200F}עברית\u{200F} \u{202E}reversed"
    static let description = "Say <b>&</b> ]]> \"this\" & 'that'\u{1}\u{7} 🎉 \u{200F}מימין\u{200F}\r\nnext line"
    // `--` and a final `-`, which a comment may not hold, reach the comment about `bell`'s default.
    override class var configName: String { "Hostile \"&'<>]]> --Config-" }
    @Setting(description: HostileConfig.description) var motto = HostileConfig.motto
    @Setting var bell = "ding\u{7}"
    @Setting var choice = HostileChoice.first
}
