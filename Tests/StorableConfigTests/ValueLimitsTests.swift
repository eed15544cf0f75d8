import Foundation
import Testing

@testable import StorableConfig

// Values at the edges of what a setting can hold: dates with huge years, values nested deeper than a store
// reads back, numbers that do not fit their type. Each is reported, names its key and stored value, reads the
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
        // The struct's one unreadable field falls back alone, and is reported by its path.
        let appointmentField = appointmentKey + ".at"
        try writeSettings(
            [
                key: "\"\(Self.hugeYear)\"", appointmentKey: "{\"title\": \"x\", \"at\": \"-\(Self.hugeYear)\"}",
                "other.app.key": "7",
            ], to: url)
        let before = [key: reports(about: key).count, appointmentField: reports(about: appointmentField).count]
        let config = DateRangeConfig(store: try JSONFileStore(url: url))
        #expect(config.lastLaunch == Date(timeIntervalSinceReferenceDate: 0))
        #expect(config.appointment == Appointment(title: "x", at: Date(timeIntervalSinceReferenceDate: 0)))
        for (reportedKey, text) in [(key, Self.hugeYear), (appointmentField, "-" + Self.hugeYear)] {
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

// MARK: - Nesting depth

/// A recursive value: each link is two JSON objects (`{"link": {"_0": …}}`), the end two more
/// (`{"end": {}}`), so `links` links nest `2 * links + 2` deep.
indirect enum Chain: Codable, Sendable {
    case end
    case link(Chain)

    init(links: Int) {
        var chain = Chain.end
        for _ in 0..<links { chain = .link(chain) }
        self = chain
    }

    var links: Int {
        var count = 0
        var chain = self
        while case .link(let next) = chain {
            count += 1
            chain = next
        }
        return count
    }
}

final class DeepValueConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "deep" }
    @Setting var chain = Chain.end
    @Setting var name = "default"
}

/// A recursive value whose coding takes about 9 KiB of stack per level, as a type with large members may.
final class Heavy: Codable, Sendable {
    let next: Heavy?

    init(depth: Int) {
        var made: Heavy?
        for _ in 0..<depth { made = Heavy(next: made) }
        next = made
    }

    private init(next: Heavy?) {
        self.next = next
    }

    var depth: Int {
        var count = 0
        var current = next
        while let level = current {
            count += 1
            current = level.next
        }
        return count
    }

    private enum CodingKeys: CodingKey { case next }

    func encode(to encoder: any Encoder) throws {
        var ballast = Ballast()
        ballast.fill()
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(next, forKey: .next)
        ballast.fill()
    }

    init(from decoder: any Decoder) throws {
        var ballast = Ballast()
        ballast.fill()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        next = try container.decodeIfPresent(Heavy.self, forKey: .next)
        ballast.fill()
    }
}

/// 8 KiB on the stack of whoever holds one.
private struct Ballast {
    var bytes = (
        SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(),
        SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(),
        SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>(), SIMD64<UInt64>()
    )

    mutating func fill() {
        withUnsafeMutableBytes(of: &bytes) { fillBallast($0) }
    }
}

@inline(never)
private func fillBallast(_ buffer: UnsafeMutableRawBufferPointer) {
    buffer[0] &+= 1
    buffer[buffer.count - 1] &+= 1
}

final class HeavyConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "deep" }
    @Setting var heavy = Heavy(depth: 0)
}

/// Runs `body` on a new thread with a stack of `stackSize` bytes and waits for it.
private func onThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
}

@Suite(.serialized)
struct NestingDepthTests {
    static let chainKey = "deep.DeepValueConfig.chain"

    @Test(arguments: StoreKind.allCases)
    func aValueNestedDeeperThanTheReaderReadsIsRefusedAtWriteAndTheFileSurvivesARestart(kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        if kind == .jsonFile {
            try writeSettings(["other.app.key": "7"], to: fixture.fileURL)
        }
        do {
            let config = DeepValueConfig(store: fixture.open())
            config.name = "kept \(kind)"
            config.chain = Chain(links: 2)
            // The issue's value: 300 levels of two containers each.
            let (_, messages) = reports(about: Self.chainKey) { config.chain = Chain(links: 300) }
            #expect(messages.count == 1)
            #expect(messages.first?.contains("cannot be stored") == true, "\(messages)")
            #expect(messages.first?.contains("nests more than") == true, "\(messages)")
            // Kept in memory only; the store holds the value before.
            #expect(config.chain.links == 300)
        }
        let reopened = DeepValueConfig(store: fixture.open())
        #expect(reopened.name == "kept \(kind)")
        #expect(reopened.chain.links == 2)
        if kind == .jsonFile {
            #expect(ReportedErrors.mentioning(fixture.fileURL.path).isEmpty)
            #expect(try jsonObject(at: fixture.fileURL)["other.app.key"] as? Int == 7)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aValueAtTheLimitRoundTripsThroughTheStoreAndARestart(kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        let atLimit = (StoredValue.maximumDepth - 2) / 2
        #expect(2 * atLimit + 2 == StoredValue.maximumDepth)
        let (_, messages) = reports(about: Self.chainKey) {
            let config = DeepValueConfig(store: fixture.open())
            config.chain = Chain(links: atLimit)
            config.name = "written"
        }
        #expect(messages.isEmpty)
        let (reopened, later) = reports(about: Self.chainKey) {
            let reopened = DeepValueConfig(store: fixture.open())
            // One level more is refused.
            let config = DeepValueConfig(store: fixture.open())
            config.chain = Chain(links: atLimit + 1)
            return reopened
        }
        #expect(reopened.chain.links == atLimit)
        #expect(reopened.name == "written")
        #expect(later.count == 1)
    }

    @Test func theEncoderStopsAtTheLimitOnASmallStackThreadAndInATask() async throws {
        ReportedErrors.install()
        let fixture = StoreFixture(.jsonFile)
        let config = DeepValueConfig(store: fixture.open())
        config.chain = Chain(links: 1)
        // Made, and released, on this thread: taking a value 5,000 deep apart recurses too.
        let deep = Chain(links: 5_000)
        let before = reports(about: Self.chainKey).count
        onThread(stackSize: 512 * 1024) { config.chain = deep }
        #expect(reports(about: Self.chainKey).count == before + 1)
        await Task.detached { config.chain = deep }.value
        let messages = reports(about: Self.chainKey).dropFirst(before)
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0.contains("nests more than") }, "\(messages)")
        withExtendedLifetime(deep) {}
        config.chain = Chain(links: 3)
        #expect(DeepValueConfig(store: fixture.open()).chain.links == 3)
    }

    @Test func aTypeWhoseCodingRunsTheStackShortGetsAReportNotACrash() throws {
        let key = "deep.HeavyConfig.heavy"
        let store = InMemoryStore()
        let config = HeavyConfig(store: store)
        // About 9 KiB of stack a level: 120 levels, within the depth limit, are more than a 512 KiB stack holds.
        let heavy = Heavy(depth: 120)
        let (_, written) = reports(about: key) {
            onThread(stackSize: 512 * 1024) { config.heavy = heavy }
        }
        #expect(written.count == 1)
        #expect(written.first?.contains("nested too deeply for this thread's stack") == true, "\(written)")
        #expect(store.value(forKey: key) == nil)
        // Written on this thread's larger stack; read on a small one, it reads the default.
        config.heavy = heavy
        #expect(store.value(forKey: key) != nil)
        let readDepth = Locked(-1)
        let (_, read) = reports(about: key) {
            onThread(stackSize: 512 * 1024) {
                let other = HeavyConfig(store: store)
                readDepth.withLock { $0 = other.heavy.depth }
            }
        }
        #expect(readDepth.withLock { $0 } == 0)
        #expect(read.count == 1)
        #expect(read.first?.contains("nested too deeply for this thread's stack") == true, "\(read)")
        #expect(HeavyConfig(store: store).heavy.depth == 120)
    }

    @Test func theJSONReaderReadsEveryValueTheEncoderWrites() throws {
        let deepest = try StoredValueEncoder().encode(Chain(links: (StoredValue.maximumDepth - 2) / 2))
        #expect(!deepest.nests(deeperThan: StoredValue.maximumDepth))
        #expect(deepest.nests(deeperThan: StoredValue.maximumDepth - 1))
        // As a settings file member, and inside a config document.
        let file = JSONText.string(from: .dictionary(["key": deepest]), pretty: true)
        #expect(try JSONText.parseObject(Data(file.utf8)).members["key"] == deepest)
        let document = JSONText.string(
            from: .dictionary(["configs": .dictionary(["C": .dictionary(["settings": .dictionary(["k": deepest])])])]),
            pretty: false)
        #expect(try JSONText.parse(Data(document.utf8)) != .null)
        // The reader's own limit, counted in arrays and objects.
        let limit = JSONText.maximumDepth
        let nested = { (depth: Int) in String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        }
        #expect(try JSONText.parse(Data(nested(limit).utf8)) != .null)
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse(Data(nested(limit + 1).utf8)) }
        #expect(throws: StoredValueCoding.Failure.self) {
            try StoredValueCoding.encodeCodable(Chain(links: (StoredValue.maximumDepth - 2) / 2 + 1))
        }
    }

    @Test func aStructThatNestsContainersInOneEncodeIsCountedToo() throws {
        struct Tower: Encodable {
            let floors: Int
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                for _ in 0..<floors { container = container.nestedUnkeyedContainer() }
                try container.encode(1)
            }
        }
        #expect(try StoredValueEncoder().encode(Tower(floors: StoredValue.maximumDepth - 1)) != .null)
        #expect(throws: EncodingError.self) { try StoredValueEncoder().encode(Tower(floors: StoredValue.maximumDepth)) }
    }
}

// MARK: - Numbers that do not fit

struct Measure: Codable, Equatable, Sendable {
    var value: Double
    var exact: Decimal
    var count: Int
}

final class NumbersConfig: StorableConfig {
    override class var namespace: String { "numbers" }
    @Setting var ratio = 0.5
    @Setting var price = Decimal(string: "1.25")!
    @Setting var count = 0
    @Setting var wide: Int64 = 0
    @Setting var unsigned: UInt64 = 0
    @Setting var small: Float = 0
    @Setting var measure = Measure(value: 0, exact: 0, count: 0)
    @Setting var note = ""
}

@Suite(.serialized)
struct NumberFitTests {
    /// An open settings file and what opening it reported.
    struct Opened {
        let config: NumbersConfig
        /// The file's text after a write of another setting.
        let file: String
        /// The reports about each member given, by name.
        let reports: [String: [String]]
        let directory: TemporaryDirectory
    }

    /// Opens a settings file holding `members` (JSON text by property name) with a NumbersConfig, then writes
    /// another setting.
    private func open(_ members: [String: String]) throws -> Opened {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let key = { (name: String) in "numbers.NumbersConfig.\(name)" }
        try writeSettings(Dictionary(uniqueKeysWithValues: members.map { (key($0.key), $0.value) }), to: url)
        let before = Dictionary(uniqueKeysWithValues: members.keys.map { ($0, reports(about: key($0)).count) })
        let config = NumbersConfig(store: try JSONFileStore(url: url))
        config.note = "written"
        let reported = Dictionary(
            uniqueKeysWithValues: members.keys.map { ($0, Array(reports(about: key($0)).dropFirst(before[$0] ?? 0))) })
        return Opened(
            config: config, file: try String(contentsOf: url, encoding: .utf8), reports: reported, directory: directory)
    }

    @Test(arguments: ["1e400", "-1e400", "1e-400", "-2.5e-99999999999999999999", "1E+99999999999999999999"])
    func aDoubleBeyondItsRangeIsReportedNotReadAsInfinityOrZero(text: String) throws {
        let opened = try open(["ratio": text])
        #expect(opened.config.ratio == 0.5)
        let messages = opened.reports["ratio"] ?? []
        #expect(messages.count == 1)
        #expect(messages.first?.contains(text) == true, "\(messages)")
        #expect(opened.file.contains("\"numbers.NumbersConfig.ratio\": \(text)"))
    }

    @Test func aDoubleReadsTheNearestDoubleOfANumberWithManyDigits() throws {
        let opened = try open(["ratio": "0.1000000000000000000000000000001"])
        #expect(opened.config.ratio == 0.1)
        #expect(opened.reports["ratio"] == [])
    }

    @Test(arguments: [
        "123456789012345678901234567890.12345678", "-0.00000000000000000000000000000000012345678901234567890",
        "99999999999999999999999999999999999999", "1.5e100", "12345678901234567890123e-10",
    ])
    func aDecimalReadsEveryDigitOfANumber(text: String) throws {
        let opened = try open(["price": text])
        let expected = try #require(Decimal(string: text))
        #expect(opened.config.price == expected)
        #expect(opened.config.price.description == expected.description)
        #expect(opened.reports["price"] == [])
        let stored = try JSONText.parse(Data(text.utf8))
        #expect(opened.file.contains("\"numbers.NumbersConfig.price\": \(stored.description)"))
    }

    @Test(arguments: ["1e400", "-1e-400", "1234567890123456789012345678901234567890123456789"])
    func aDecimalThatDoesNotFitIsReportedWithTheStoredText(text: String) throws {
        let opened = try open(["price": text])
        #expect(opened.config.price == Decimal(string: "1.25")!)
        let messages = opened.reports["price"] ?? []
        #expect(messages.count == 1)
        #expect(messages.first?.contains(text) == true, "\(messages)")
        #expect(messages.first?.contains("Infinity") == false, "\(messages)")
        #expect(opened.file.contains("\"numbers.NumbersConfig.price\": \(text)"))
    }

    @Test(arguments: [
        ("count", "1e30"), ("count", "2.5"), ("wide", "9223372036854775808"), ("wide", "-9223372036854775809"),
        ("unsigned", "18446744073709551616"), ("unsigned", "-1"), ("unsigned", "1e20"),
        ("count", "100000000000000000000000000000000000000000.0"), ("count", "1e-400"),
    ])
    func anIntegerThatDoesNotFitIsReported(name: String, text: String) throws {
        let opened = try open([name: text])
        #expect(opened.config.count == 0 && opened.config.wide == 0 && opened.config.unsigned == 0)
        let messages = opened.reports[name] ?? []
        #expect(messages.count == 1)
        // The stored value as the file holds it: the text, or the Double's own text for one that a Double holds
        // exactly (1e30 is 1e+30).
        let stored = try JSONText.parse(Data(text.utf8))
        #expect(messages.first?.contains(stored.description) == true, "\(messages)")
        #expect(opened.file.contains("\"numbers.NumbersConfig.\(name)\": \(stored.description)"))
    }

    @Test func anIntegerReadsEveryDigitOfANumberWrittenWithAFractionOrExponent() throws {
        let opened = try open([
            "count": "9007199254740993.0", "wide": "-9223372036854775808.000", "unsigned": "18446744073709551615e0",
        ])
        #expect(opened.config.count == 9_007_199_254_740_993)
        #expect(opened.config.wide == .min)
        #expect(opened.config.unsigned == .max)
        #expect(opened.reports.values.allSatisfy { $0.isEmpty })
    }

    @Test(arguments: ["1e-50", "-1e-46", "1e39", "1e400"])
    func aFloatOutOfItsRangeIsReported(text: String) throws {
        let opened = try open(["small": text])
        #expect(opened.config.small == 0)
        let stored = try JSONText.parse(Data(text.utf8))
        #expect(opened.reports["small"]?.first?.contains(stored.description) == true, "\(opened.reports)")
    }

    @Test func numbersInsideACodableValueAreReadExactlyOrReported() throws {
        let field = "'numbers.NumbersConfig.measure.value'"
        let before = ReportedErrors.mentioning(field).count
        let tooLarge = try open(["measure": #"{"value": 1e400, "exact": 1, "count": 1}"#])
        // The field that does not fit falls back alone to the default's, and is reported by its path.
        #expect(tooLarge.config.measure == Measure(value: 0, exact: 1, count: 1))
        let reported = ReportedErrors.mentioning(field).dropFirst(before).map(\.description)
        #expect(reported.count == 1 && reported.first?.contains("1e400") == true, "\(reported)")
        let exact = try open([
            "measure": #"{"value": 1e-3, "exact": 123456789012345678901234567890.5, "count": 9007199254740993e0}"#
        ])
        #expect(
            exact.config.measure
                == Measure(
                    value: 0.001, exact: Decimal(string: "123456789012345678901234567890.5")!,
                    count: 9_007_199_254_740_993))
        #expect(exact.reports["measure"] == [])
    }

    @Test func textGivenForASettingIsReadExactlyOrRefused() throws {
        let config = NumbersConfig(store: InMemoryStore())
        try config.$price.assign(parsing: "123456789012345678901234567890.12345678")
        #expect(config.price == Decimal(string: "123456789012345678901234567890.12345678")!)
        try config.$count.assign(parsing: "9007199254740993.0")
        #expect(config.count == 9_007_199_254_740_993)
        for text in ["1e400", "1.5e-9223372036854775808", "1e-99999999999999999999999"] {
            #expect(throws: StorableConfigError.self) { try config.$ratio.assign(parsing: text) }
        }
        #expect(config.ratio == 0.5)
    }

    @Test func aNumberKeptAsTextSurvivesEveryStore() throws {
        let text = "123456789012345678901234567890.12345678"
        for kind in StoreKind.allCases {
            let fixture = StoreFixture(kind)
            let store = fixture.open()
            try store.setValue(.number(text), forKey: "numbers.NumbersConfig.price")
            #expect(NumbersConfig(store: store).price == Decimal(string: text)!, "\(kind)")
        }
    }
}

// MARK: - Number text

struct JSONNumberTests {
    @Test(arguments: [
        "1e400", "-1e400", "1e-400", "18446744073709551616", "-9223372036854775809", "0.1000000000000000000000001",
        "123456789012345678901234567890", "1.5e-9223372036854775808", "1e99999999999999999999999",
        "0.0e-9223372036854775809", "9007199254740993.0",
    ])
    func numbersNoOtherCaseHoldsExactlyKeepTheirText(text: String) throws {
        let parsed = try JSONText.parse(Data(text.utf8))
        if text == "0.0e-9223372036854775809" {
            #expect(parsed == .double(0))
        } else {
            #expect(parsed == .number(text))
        }
        #expect(JSONText.string(from: parsed, pretty: false) == (text.hasPrefix("0.0e") ? "0.0" : text))
        let object = try JSONText.parseObject(Data("{\"k\": [\(text)]}".utf8))
        #expect(object.rawMembers["k"] == (text.hasPrefix("0.0e") ? nil : "[\(text)]"))
    }

    @Test func textThatIsNotAJSONNumberIsWrittenAsAString() throws {
        for text in ["abc", "", "01", "1.", ".5", "+1", "1e", "NaN", "1 2", "\"1\""] {
            let written = JSONText.string(from: .array([.number(text)]), pretty: false)
            #expect(try JSONText.parse(Data(written.utf8)) == .array([.string(text)]), "\(written)")
        }
        #expect(JSONText.string(from: .number("-0.5E+2"), pretty: false) == "-0.5E+2")
    }

    @Test func theDecimalFormIgnoresZerosAndNeverOverflows() {
        #expect(JSONNumber.decimalForm(of: "-3.140e2") == .init(negative: true, digits: Array("314".utf8), exponent: 0))
        #expect(JSONNumber.decimalForm(of: "0.00") == .init(negative: false, digits: [], exponent: 0))
        #expect(JSONNumber.decimalForm(of: "1e99999999999999999999999")?.exponent ?? 0 > 1_000_000_000)
        #expect(JSONNumber.decimalForm(of: "1.5e-9223372036854775809")?.exponent ?? 0 < -1_000_000_000)
        #expect(JSONNumber.decimalForm(of: "1.5.5") == nil)
        #expect(JSONNumber.integer("-9223372036854775808", as: Int64.self) == .min)
        #expect(JSONNumber.integer("-9223372036854775808", as: Int8.self) == nil)
        #expect(JSONNumber.integer("255e0", as: UInt8.self) == 255)
        #expect(JSONNumber.integer("25.5e1", as: UInt8.self) == 255)
        #expect(JSONNumber.integer("2.555e2", as: UInt8.self) == nil)
        #expect(JSONNumber.integer("-0", as: UInt8.self) == 0)
        #expect(
            JSONNumber.integer("1" + String(repeating: "0", count: 19) + "e0", as: UInt64.self)
                == 10_000_000_000_000_000_000)
        #expect(JSONNumber.integer("1e20", as: UInt64.self) == nil)
        #expect(JSONNumber.double("4.9e-324") == .leastNonzeroMagnitude)
        #expect(JSONNumber.double("1.7976931348623157e308") == .greatestFiniteMagnitude)
        #expect(JSONNumber.double("1.8e308") == nil)
        #expect(JSONNumber.double("-0.0") == 0)
        #expect(JSONNumber.decimal("1e127") == Decimal(string: "1e127"))
        #expect(JSONNumber.decimal("1e128") == nil)
        #expect(JSONNumber.decimal("-1e-128") == Decimal(string: "-1e-128"))
        #expect(JSONNumber.decimal("340282366920938463463374607431768211456") == nil)
    }
}

/// A value handed to the JSON file store itself, not through a setting, meets the same limit: written, it would
/// cost the whole file at the next start.
struct DirectDepthTests {
    @Test func theFileStoreRefusesAValueNestedDeeperThanItsReaderReads() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        var deep = StoredValue.int(1)
        for _ in 0..<200 { deep = .array([deep]) }
        var atLimit = StoredValue.int(1)
        for _ in 0..<StoredValue.maximumDepth { atLimit = .array([atLimit]) }
        do {
            let store = try JSONFileStore(url: url)
            try store.setValue(.string("kept"), forKey: "other")
            #expect(throws: StorableConfigError.self) { try store.setValue(deep, forKey: "deep") }
            #expect(throws: StorableConfigError.self) {
                try store.setValues(["deep": deep], removingValuesForKeys: [])
            }
            #expect(throws: StorableConfigError.self) {
                try store.updateValues(forKeys: ["deep"]) { $0["deep"] = deep }
            }
            try store.setValue(atLimit, forKey: "atLimit")
        }
        // A new store over the file, as the next start would open it: nothing was quarantined.
        let reopened = try JSONFileStore(url: url, refusingCorruptFile: true)
        #expect(reopened.value(forKey: "other") == .string("kept"))
        #expect(reopened.value(forKey: "atLimit") == atLimit)
        #expect(reopened.value(forKey: "deep") == nil)
    }
}
