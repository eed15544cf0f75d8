import Foundation
import Testing

@testable import StorableConfig

/// The seed article's type matrix, against every store: each type's default, then a written value read back
/// through a fresh config over a freshly opened store, so that persistence, not the cache, is checked.
struct SupportedTypesTests {
    static let joined = Date(timeIntervalSinceReferenceDate: 785_000_000.123_456_7)
    static let profile = Profile(name: "Nakayasu \"nkysu\" Ōno", age: 37, joined: joined, tags: ["a", "b"])
    static let date = Date(timeIntervalSinceReferenceDate: 817_000_000.987_654_3)

    @Test(arguments: StoreKind.allCases)
    func everyTypeReadsItsDefaultThenReadsBackWhatWasWritten(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let config = MatrixConfig(store: fixture.open())
            #expect(config.bool == false)
            #expect(config.int == 0)
            #expect(config.string == "")
            #expect(config.double == 0)
            #expect(config.float == 0)
            #expect(config.strings == [])
            #expect(config.counts == [:])
            #expect(config.url == URL(string: "https://example.com")!)
            #expect(config.profile == Profile(name: "", age: 0))
            #expect(config.account == Account(id: 0, email: ""))
            #expect(config.theme == .light)
            #expect(config.layout == .list)
            #expect(config.date == Date(timeIntervalSince1970: 0))
            #expect(config.data == Data())
            #expect(config.int64 == 0)
            #expect(config.uint64 == 0)
            #expect(config.optionalBool == nil)
            #expect(config.optionalProfile == nil)
            #expect(config.greeting == "hello")

            config.bool = true
            config.int = -42
            config.string = "tab\t quote\" backslash\\ newline\n emoji 🎌 ü"
            config.double = 0.1
            config.float = 0.1
            config.strings = ["sleep", "", "eat"]
            config.counts = ["apples": 3, "pears": -1]
            config.url = URL(string: "https://example.com/a/b?c=d&e=%20#frag")!
            config.profile = Self.profile
            config.account = Account(id: 7, email: "a@example.com")
            config.theme = .dark
            config.layout = .grid(columns: 3)
            config.date = Self.date
            config.data = Data([0, 1, 2, 255, 0])
            config.int64 = .min
            config.uint64 = .max
            config.int8 = -128

            config.optionalBool = false
            config.optionalInt = 0
            config.optionalString = ""
            config.optionalDouble = -.infinity
            config.optionalFloat = 3.4028235e38
            config.optionalStrings = []
            config.optionalCounts = ["x": Int.max]
            config.optionalURL = URL(fileURLWithPath: "/tmp/some file.txt")
            config.optionalProfile = Profile(name: "o", age: 1)
            config.optionalAccount = Account(id: 1, email: "")
            config.optionalTheme = .system
            config.optionalDate = Date(timeIntervalSinceReferenceDate: -1_000_000_000.5)
            config.optionalData = Data()
            config.optionalInt64 = .max
            config.retries = nil
            config.favouriteTheme = nil
        }

        let config = MatrixConfig(store: fixture.open())
        #expect(config.bool == true)
        #expect(config.int == -42)
        #expect(config.string == "tab\t quote\" backslash\\ newline\n emoji 🎌 ü")
        #expect(config.double == 0.1)
        #expect(config.float == 0.1)
        #expect(config.strings == ["sleep", "", "eat"])
        #expect(config.counts == ["apples": 3, "pears": -1])
        #expect(config.url == URL(string: "https://example.com/a/b?c=d&e=%20#frag")!)
        #expect(config.profile == Self.profile)
        #expect(config.account == Account(id: 7, email: "a@example.com"))
        #expect(config.theme == .dark)
        #expect(config.layout == .grid(columns: 3))
        #expect(config.date == Self.date)
        #expect(config.data == Data([0, 1, 2, 255, 0]))
        #expect(config.int64 == .min)
        #expect(config.uint64 == .max)
        #expect(config.int8 == -128)

        #expect(config.optionalBool == false)
        #expect(config.optionalInt == 0)
        #expect(config.optionalString == "")
        #expect(config.optionalDouble == -.infinity)
        #expect(config.optionalFloat == 3.4028235e38)
        #expect(config.optionalStrings == [])
        #expect(config.optionalCounts == ["x": Int.max])
        #expect(config.optionalURL == URL(fileURLWithPath: "/tmp/some file.txt"))
        #expect(config.optionalProfile == Profile(name: "o", age: 1))
        #expect(config.optionalAccount == Account(id: 1, email: ""))
        #expect(config.optionalTheme == .system)
        #expect(config.optionalDate == Date(timeIntervalSinceReferenceDate: -1_000_000_000.5))
        #expect(config.optionalData == Data())
        #expect(config.optionalInt64 == .max)
        #expect(config.retries == nil)
        #expect(config.favouriteTheme == nil)
        #expect(config.greeting == "hello")
    }

    @Test(arguments: StoreKind.allCases)
    func optionalsSetBackToNilAreRemovedFromTheStore(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let config = MatrixConfig(store: store)
        config.optionalProfile = Profile(name: "x", age: 2)
        config.optionalDate = Date()
        config.optionalURL = URL(string: "https://example.com")
        config.optionalProfile = nil
        config.optionalDate = nil
        config.optionalURL = nil
        for key in [config.$optionalProfile.key, config.$optionalDate.key, config.$optionalURL.key] {
            #expect(try store.value(forKey: key) == nil)
        }
        #expect(MatrixConfig(store: fixture.open()).optionalProfile == nil)
    }

    @Test func nativeTypesAreStoredAsPlainValues() throws {
        let store = InMemoryStore()
        let config = MatrixConfig(store: store)
        config.bool = true
        config.string = "s"
        config.float = 0.1
        config.strings = ["a"]
        config.counts = ["a": 1]
        config.url = URL(string: "https://example.com/x")!
        config.theme = .dark
        config.uint64 = .max
        config.int64 = .min
        config.profile = Profile(name: "n", age: 3)
        let values = store.allValues
        #expect(values[config.$bool.key] == .bool(true))
        #expect(values[config.$string.key] == .string("s"))
        #expect(values[config.$float.key] == .double(0.1))
        #expect(values[config.$strings.key] == .array([.string("a")]))
        #expect(values[config.$counts.key] == .dictionary(["a": .int(1)]))
        #expect(values[config.$url.key] == .string("https://example.com/x"))
        #expect(values[config.$theme.key] == .string("dark"))
        #expect(values[config.$uint64.key] == .uint(.max))
        #expect(values[config.$int64.key] == .int(.min))
        #expect(values[config.$profile.key] == .dictionary(["name": .string("n"), "age": .int(3), "tags": .array([])]))
    }

    @Test func integersOutOfRangeForTheDeclaredWidthAreMismatches() {
        ReportedErrors.install()
        let store = InMemoryStore(["matrix.MatrixConfig.int8": .int(300), "matrix.MatrixConfig.int": .double(2.5)])
        let config = MatrixConfig(store: store)
        #expect(config.int8 == 0)
        #expect(config.int == 0)
        #expect(ReportedErrors.mentioning("matrix.MatrixConfig.int8").count >= 1)
    }

    @Test func leninentFormsFromHandEditedFilesAreAccepted() {
        let store = InMemoryStore([
            "matrix.MatrixConfig.int": .double(3.0),
            "matrix.MatrixConfig.double": .int(2),
            "matrix.MatrixConfig.date": .string("2026-11-21T16:47:43.25+09:00"),
            "matrix.MatrixConfig.data": .string("AAEC"),
        ])
        let config = MatrixConfig(store: store)
        #expect(config.int == 3)
        #expect(config.double == 2)
        #expect(config.date == ISO8601Timestamp.date(from: "2026-11-21T07:47:43.25Z"))
        #expect(config.data == Data([0, 1, 2]))
    }
}
