import Foundation
import StorableConfig
import Testing

final class MessageConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "messages" }
    @Setting var count = 0
    @Setting var lastLaunch: Date? = nil
    @Setting var hobbies: [String] = []
    @Setting var scores: [String: Int] = [:]
    @Setting var nested: [[String: Int]]? = nil
    @Setting var tags: Set<String> = []
    @Setting var unsigned: UInt8 = 0
    @Setting var nickname: String? = nil
    @Setting var name = ""
    @Records var incomes: RecordCollection<Income>
}

final class OverriddenMessageConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "messages" }
    override class var overrides: ConfigOverrides { .environment(["OVERRIDDEN_MESSAGE_CONFIG_COUNT": "many"]) }
    @Setting var count = 0
}

/// The sentences of ``StorableConfigError`` and the type names in them, as a person reads them.
struct ErrorMessageTests {
    @Test func typeNamesAreWrittenAsSwiftCodeWritesThem() {
        let config = MessageConfig(store: InMemoryStore())
        let names = Dictionary(uniqueKeysWithValues: config.allSettings.map { ($0.name, $0.valueTypeName) })
        #expect(names["count"] == "Int")
        #expect(names["lastLaunch"] == "Date?")
        #expect(names["hobbies"] == "[String]")
        #expect(names["scores"] == "[String: Int]")
        #expect(names["nested"] == "[[String: Int]]?")
        #expect(names["tags"] == "Set<String>")
        #expect(names["incomes"] == "RecordCollection<Income>")
    }

    @Test func aValueOfTheWrongTypeIsReportedInOneSentenceWithTheRightArticle() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let stored = """
            {
              "messages.MessageConfig.count": 999999999999999999999,
              "messages.MessageConfig.lastLaunch": "yesterday",
              "messages.MessageConfig.hobbies": "sleep",
              "messages.MessageConfig.unsigned": -1,
              "messages.MessageConfig.scores": {"a": [1,
                 99999999999999999999999]},
              "messages.MessageConfig.incomes": {"r": 3}
            }
            """
        try Data(stored.utf8).write(to: url)
        _ = MessageConfig(store: try JSONFileStore(url: url))
        func reported(_ name: String) -> [String] {
            ReportedErrors.mentioning("'messages.MessageConfig.\(name)").map(\.description)
        }
        let tail = "; the setting reads as its default and the stored value"
        #expect(
            reported("count") == [
                "The value stored for 'messages.MessageConfig.count' is not an Int (the number "
                    + "999999999999999999999 does not fit in Int)"
                    + "\(tail) 999999999999999999999 is left in place until the setting is assigned."
            ])
        #expect(
            reported("lastLaunch") == [
                "The value stored for 'messages.MessageConfig.lastLaunch' is not a Date? (\"yesterday\" is not "
                    + "an ISO 8601 date)"
                    + "\(tail) \"yesterday\" is left in place until the setting is assigned."
            ])
        #expect(reported("hobbies").first?.contains("is not a [String] (it is a string)") == true)
        #expect(reported("unsigned").first?.contains("is not a UInt8 (") == true)
        #expect(reported("scores").first?.contains("is not a [String: Int] (") == true)
        #expect(reported("scores").first?.contains(#"stored value {"a": [1,99999999999999999999999]} is left"#) == true)
        #expect(
            reported("incomes[r]") == [
                "The value stored for 'messages.MessageConfig.incomes[r]' is not an Income (Expected a dictionary but "
                    + "found an integer instead; the record is skipped and kept in the store)\(tail) 3 is left in place "
                    + "until the setting is assigned."
            ])
    }

    @Test func aRecordCollectionOfTheWrongShapeIsNotADictionaryOfRecords() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        store.setValue(.array([.int(1)]), forKey: "messages.MessageConfig.incomes")
        _ = MessageConfig(store: store)
        let reported = ReportedErrors.mentioning("'messages.MessageConfig.incomes'").map(\.description)
        #expect(
            reported.first?.hasPrefix(
                "The value stored for 'messages.MessageConfig.incomes' is not a dictionary "
                    + "of records (it is an array;") == true, "\(reported)")
    }

    @Test(arguments: [
        (
            StorableConfigError.writeFailed(key: "k", reason: "The file doesn’t exist."),
            "Writing 'k' to the store failed (The file doesn’t exist); the stored value stays the previous one "
                + "until a later write succeeds, and the setting reads the new value meanwhile, unless the store "
                + "keeps no failed writes (as a shared cluster's does): then it reads the stored value."
        ),
        (
            StorableConfigError.fileUnusable(
                path: "/p/x.json", reason: "creating its directory /p failed: No such file."),
            "The settings file /p/x.json cannot be used: creating its directory /p failed: No such file."
        ),
        (
            StorableConfigError.invalidValue(key: "k", value: "2", reason: "it is outside the range 0.0...1.0"),
            "The value 2 is not valid for 'k': it is outside the range 0.0...1.0."
        ),
        (
            StorableConfigError.readFailed(key: "k", reason: "it was cut short..."),
            "Reading 'k' from the store failed (it was cut short...); the setting keeps its current value."
        ),
    ])
    func aReasonIsAClauseWithoutAPeriodOfItsOwn(error: StorableConfigError, description: String) {
        #expect(error.description == description)
    }

    @Test func anInvalidOverrideNamesTheTypeWithTheRightArticle() throws {
        ReportedErrors.install()
        let config = OverriddenMessageConfig(store: InMemoryStore())
        #expect(
            config.overrideProblems.map(\.description) == [
                "The environment variable OVERRIDDEN_MESSAGE_CONFIG_COUNT gives \"many\" for "
                    + "'messages.OverriddenMessageConfig.count', which is not valid: it is not an Int (expected a "
                    + "whole number); the setting reads the next source instead."
            ])
    }

    @Test func valueTextReadsBackAsTheSameValue() throws {
        let config = MessageConfig(store: InMemoryStore())
        let nickname = try #require(config.allSettings.first { $0.name == "nickname" })
        let name = try #require(config.allSettings.first { $0.name == "name" })
        config.nickname = "null"
        #expect(nickname.valueText == #""null""#)
        config.nickname = nil
        #expect(nickname.valueText == "null")
        for text in ["null", "nil", "5", #""quoted""#, "[1]", "line\nbreak"] {
            config.nickname = text
            try nickname.assign(parsing: nickname.valueText)
            #expect(config.nickname == text)
            config.name = text
            try name.assign(parsing: name.valueText)
            #expect(config.name == text)
        }
    }
}
