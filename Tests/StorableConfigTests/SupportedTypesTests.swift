import Foundation
import Testing

@testable import StorableConfig

/// The seed article's type matrix, against every store: each type's default, then a written value read back
/// through a fresh config over a freshly opened store, so that persistence, not the cache, is checked.
struct SupportedTypesTests {
    /// Pinned, as SupportedTypes.md says: JSON has one `null`, so `.some(nil)` and `nil` are stored alike, and a
    /// nested optional holding `.some(nil)` reads back as `nil`.
    @Test(arguments: [StoreKind.memory, .jsonFile])
    func aNestedOptionalHoldingSomeNilReadsBackAsNil(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let inner: Int?? = .some(nil)
        do {
            let config = NestedOptionalConfig(store: fixture.open())
            config.level = inner
            #expect(config.level == inner)
            let document = try ConfigDocument(jsonText: try ConfigDocument(exporting: [config]).jsonText())
            let imported = NestedOptionalConfig(store: InMemoryStore())
            try document.apply(to: [imported])
            #expect(imported.level == Int??.none)
        }
        #expect(NestedOptionalConfig(store: fixture.open()).level == Int??.none)
    }

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

    /// Values at the edges of each type, and property names beyond ASCII, through every store and a fresh
    /// config over a freshly opened store.
    @Test(arguments: StoreKind.allCases)
    func extremeValuesAndNamesBeyondASCIIReadBackAfterReopening(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            ExtremesConfig.assignExtremes(to: ExtremesConfig(store: fixture.open()))
        }
        let config = ExtremesConfig(store: fixture.open())
        #expect(config.differencesFromExtremes() == [])
        if kind == .jsonFile {
            // And the file is JSON that other programs read.
            let object = try jsonObject(at: fixture.fileURL)
            #expect(object["extremes.ExtremesConfig.名前"] as? String == ExtremesConfig.name)
        }
    }

    /// The same values through a UserDefaults suite's property list file: written by one process, read by
    /// another.
    @Test func extremeValuesAndNamesBeyondASCIIReadBackFromAUserDefaultsSuitesFile() async throws {
        let suite = Self.extremesSuite(testProcess: getpid())
        let file = UserDefaultsStore.propertyListURL(domain: suite)
        defer {
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: file)
        }
        await #expect(processExitsWith: .success) {
            let suite = SupportedTypesTests.extremesSuite(testProcess: getppid())
            ExtremesConfig.assignExtremes(
                to: ExtremesConfig(store: UserDefaultsStore(suiteName: suite, saving: .onEveryWrite)!))
            exit(0)
        }
        #expect(FileManager.default.fileExists(atPath: file.path))
        let store = try #require(UserDefaultsStore(suiteName: suite))
        #expect(ExtremesConfig(store: store).differencesFromExtremes() == [])
    }

    static func extremesSuite(testProcess: pid_t) -> String {
        "StorableConfigTests-extremes-\(testProcess)"
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

/// Values at the edges of what each type holds, and settings named beyond ASCII.
final class ExtremesConfig: StorableConfig {
    override class var namespace: String { "extremes" }
    @Setting var notANumber = 0.0
    @Setting var infinity = 0.0
    @Setting var negativeInfinity = 0.0
    @Setting var smallestInt = 0
    @Setting var largestInt = 0
    @Setting var largestUInt64: UInt64 = 0
    @Setting var largestFloat: Float = 0
    @Setting var decimal = Decimal(0)
    @Setting var distantPast = Date(timeIntervalSince1970: 0)
    @Setting var distantFuture = Date(timeIntervalSince1970: 0)
    @Setting var controlCharacters = ""
    @Setting var emoji = ""
    @Setting var café = ""
    @Setting var 名前 = ""

    /// Every C0 control character, NUL first, then DEL and the C1 controls.
    static let controls = String(
        String.UnicodeScalarView(
            (0x00...0x1F).compactMap(Unicode.Scalar.init) + (0x7F...0x9F).compactMap(Unicode.Scalar.init)))
    /// A family and a rainbow flag (zero-width joiner sequences), a skin tone, a country flag.
    static let emoji = "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵"
    static let decimal = Decimal(string: "98765432109876543210987654321098765432")!
    static let name = "名前 café"

    static func assignExtremes(to config: ExtremesConfig) {
        config.notANumber = .nan
        config.infinity = .infinity
        config.negativeInfinity = -.infinity
        config.smallestInt = .min
        config.largestInt = .max
        config.largestUInt64 = .max
        config.largestFloat = .greatestFiniteMagnitude
        config.decimal = decimal
        config.distantPast = .distantPast
        config.distantFuture = .distantFuture
        config.controlCharacters = controls
        config.emoji = emoji
        config.café = "e\u{301}"
        config.名前 = name
    }

    /// The names of the settings that do not hold what ``assignExtremes(to:)`` assigned.
    func differencesFromExtremes() -> [String] {
        let checks: [(String, Bool)] = [
            ("notANumber", notANumber.isNaN),
            ("infinity", infinity == .infinity),
            ("negativeInfinity", negativeInfinity == -.infinity),
            ("smallestInt", smallestInt == .min),
            ("largestInt", largestInt == .max),
            ("largestUInt64", largestUInt64 == .max),
            ("largestFloat", largestFloat == .greatestFiniteMagnitude),
            ("decimal", decimal == Self.decimal),
            ("distantPast", distantPast == .distantPast),
            ("distantFuture", distantFuture == .distantFuture),
            // By their bytes: `==` on `String` would take other spellings for the same text.
            ("controlCharacters", Array(controlCharacters.utf8) == Array(Self.controls.utf8)),
            ("emoji", Array(emoji.utf8) == Array(Self.emoji.utf8)),
            ("café", Array(café.utf8) == Array("e\u{301}".utf8)),
            ("名前", Array(名前.utf8) == Array(Self.name.utf8)),
        ]
        return checks.filter { !$0.1 }.map(\.0)
    }
}

final class NestedOptionalConfig: StorableConfig {
    @Setting var level: Int?? = 5
}
