import Foundation
import Testing

@testable import StorableConfig

// Values at the edges of what a setting can hold. Each is reported, names its key and stored value, reads the
// default, and leaves what is stored untouched; none stops the program.

/// Writes a settings file by hand, as a person or another program would.
private func writeSettings(_ members: [String: String], to url: URL) throws {
    let lines = members.sorted { $0.key < $1.key }.map { "  \"\($0.key)\": \($0.value)" }
    try Data(("{\n" + lines.joined(separator: ",\n") + "\n}\n").utf8).write(to: url)
}

/// Reports that mention `key`, as their descriptions.
private func reports(about key: String) -> [String] {
    ReportedErrors.mentioning("'\(key)'").map(\.description)
}

/// The reports about `key` made while `body` runs. (The suites that use it run their tests one at a time: they
/// share keys.)
private func reports<Result>(about key: String, during body: () throws -> Result) rethrows -> (Result, [String]) {
    ReportedErrors.install()
    let before = reports(about: key).count
    let result = try body()
    return (result, Array(reports(about: key).dropFirst(before)))
}

// MARK: - Dates

struct Appointment: Codable, Equatable, Sendable {
    var title: String
    var at: Date
}

final class DateRangeConfig: StorableConfig {
    override class var namespace: String { "dates" }
    @Setting var lastLaunch = Date(timeIntervalSinceReferenceDate: 0)
    @Setting var appointment = Appointment(title: "none", at: Date(timeIntervalSinceReferenceDate: 0))
    @Setting var note = ""
}

final class DateOverrideConfig: StorableConfig {
    override class var namespace: String { "dates" }
    override class var overrides: ConfigOverrides {
        ConfigOverrides(
            environment: ["DATE_OVERRIDE_CONFIG_LAST_LAUNCH": "999999999999-01-01T00:00:00Z"], arguments: nil)
    }
    @Setting var lastLaunch = Date(timeIntervalSinceReferenceDate: 0)
}

@Suite(.serialized)
struct DateRangeTests {
    static let hugeYear = "999999999999-01-01T00:00:00Z"

    @Test func aStoredDateWithAHugeYearIsReportedAndTheFileKeepsIt() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let key = "dates.DateRangeConfig.lastLaunch"
        let appointmentKey = "dates.DateRangeConfig.appointment"
        try writeSettings(
            [
                key: "\"\(Self.hugeYear)\"", appointmentKey: "{\"title\": \"x\", \"at\": \"-\(Self.hugeYear)\"}",
                "other.app.key": "7",
            ], to: url)
        let before = [key: reports(about: key).count, appointmentKey: reports(about: appointmentKey).count]
        let config = DateRangeConfig(store: try JSONFileStore(url: url))
        #expect(config.lastLaunch == Date(timeIntervalSinceReferenceDate: 0))
        #expect(config.appointment.title == "none")
        for (reportedKey, text) in [(key, Self.hugeYear), (appointmentKey, "-" + Self.hugeYear)] {
            let messages = reports(about: reportedKey).dropFirst(before[reportedKey] ?? 0)
            #expect(messages.count == 1)
            #expect(messages.first?.contains(text) == true, "\(messages)")
            #expect(messages.first?.contains("beyond the dates that can be read") == true, "\(messages)")
        }
        config.note = "written"
        let file = try jsonObject(at: url)
        #expect(file[key] as? String == Self.hugeYear)
        #expect(file["other.app.key"] as? Int == 7)
        #expect(file["dates.DateRangeConfig.note"] as? String == "written")
    }

    @Test func aHugeYearGivenAsTextIsRefusedAndChangesNothing() throws {
        let store = InMemoryStore()
        let config = DateRangeConfig(store: store)
        for text in [Self.hugeYear, "-" + Self.hugeYear, "292277026627-12-06T15:30:08Z"] {
            #expect(throws: StorableConfigError.self) { try config.$lastLaunch.assign(parsing: text) }
        }
        try config.$lastLaunch.assign(parsing: "292277026627-12-06T15:30:07Z")
        #expect(config.lastLaunch.timeIntervalSinceReferenceDate == Double(Int64.max))
    }

    @Test func aHugeYearInAnEnvironmentOverrideIsReportedAndTheStoredValueRead() throws {
        let stored = Date(timeIntervalSinceReferenceDate: 86_400)
        let store = InMemoryStore(["dates.DateOverrideConfig.lastLaunch": .date(stored)])
        let (config, messages) = reports(about: "dates.DateOverrideConfig.lastLaunch") {
            DateOverrideConfig(store: store)
        }
        #expect(config.lastLaunch == stored)
        #expect(messages.contains { $0.contains(Self.hugeYear) }, "\(messages)")
    }

    @Test func anImportedDocumentWithAHugeYearChangesNothing() throws {
        let store = InMemoryStore(["dates.DateRangeConfig.note": .string("before")])
        let config = DateRangeConfig(store: store)
        let document = try ConfigDocument(
            jsonText: """
                {"format": "StorableConfig settings", "formatVersion": 1, "configs": {"DateRangeConfig": {
                  "namespace": "dates", "schemaVersion": 0,
                  "settings": {"lastLaunch": "\(Self.hugeYear)", "note": "after"}}}}
                """)
        #expect(throws: ConfigDocumentError.self) { try document.apply(to: [config]) }
        #expect(store.allValues == ["dates.DateRangeConfig.note": .string("before")])
        #expect(config.note == "before")
    }

    @Test func theDemoListsAndRefusesAHugeYearWithoutStopping() throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "before")
        var settings = try home.settings()
        settings["storable-config-demo.AppConfig.lastLaunch"] = Self.hugeYear
        try JSONSerialization.data(withJSONObject: settings).write(to: home.settingsFile)
        let listed = try home.run("list")
        #expect(listed.status == 0, "\(listed.errorOutput)")
        #expect(listed.errorOutput.contains("storable-config-demo.AppConfig.lastLaunch"))
        #expect(listed.output.contains("app.userName"))
        let refused = try home.run("set", "app.lastLaunch", Self.hugeYear)
        #expect(refused.status == 2, "\(refused.errorOutput)")
        #expect(try home.settings()["storable-config-demo.AppConfig.lastLaunch"] as? String == Self.hugeYear)
        #expect(try home.settings()["storable-config-demo.AppConfig.userName"] as? String == "before")
    }
}
