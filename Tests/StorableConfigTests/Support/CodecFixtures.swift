import Foundation

import StorableConfig

// Values of every shape that goes through the Codable path, for the codec fixtures: files written by the
// codec of 2026-11-21 (JSONEncoder, then parsed into a StoredValue tree), which every later codec must read.

struct FixtureAddress: Codable, Equatable, Sendable {
    var street: String
    var postcode: String?
    var floor: Int?
}

struct FixtureProfile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var height: Double
    var weight: Float
    var ratio: Double
    var isAdmin: Bool
    var nickname: String?
    var address: FixtureAddress
    var previous: [FixtureAddress]
    var tags: Set<String>
    var scores: [Int: Double]
    var labels: [String: [Int]]
    var balance: Decimal
    var preciseBalance: Decimal
    var joined: Date
    var lastSeen: Date?
    var avatar: Data
    var homepage: URL
    var links: [URL]
    var largest: Int64
    var largestUnsigned: UInt64
    var smallest: Int8
    var notANumber: Double
    var infinite: Float
    var role: FixtureRole
    var status: FixtureStatus
}

enum FixtureRole: String, Codable, Equatable, Sendable {
    case viewer, editor, owner
}

enum FixtureStatus: Codable, Equatable, Sendable {
    case offline
    case away(since: Date, message: String?)
    case busy(Int, until: Date)
    case nested(FixtureAddress, [FixtureStatus])

    // NaN is never equal to itself; compare the fixtures' NaNs as equal.
    static func == (lhs: FixtureStatus, rhs: FixtureStatus) -> Bool {
        switch (lhs, rhs) {
        case (.offline, .offline): true
        case (.away(let a, let b), .away(let c, let d)): a == c && b == d
        case (.busy(let a, let b), .busy(let c, let d)): a == c && b == d
        case (.nested(let a, let b), .nested(let c, let d)): a == c && b == d
        default: false
        }
    }
}

extension FixtureProfile {
    static func == (lhs: FixtureProfile, rhs: FixtureProfile) -> Bool {
        var left = lhs
        var right = rhs
        guard left.notANumber.isNaN == right.notANumber.isNaN else { return false }
        left.notANumber = 0
        right.notANumber = 0
        return left.name == right.name && left.age == right.age && left.height == right.height
            && left.weight == right.weight && left.ratio == right.ratio && left.isAdmin == right.isAdmin
            && left.nickname == right.nickname && left.address == right.address && left.previous == right.previous
            && left.tags == right.tags && left.scores == right.scores && left.labels == right.labels
            && left.balance == right.balance && left.preciseBalance == right.preciseBalance
            && left.joined == right.joined && left.lastSeen == right.lastSeen && left.avatar == right.avatar
            && left.homepage == right.homepage && left.links == right.links && left.largest == right.largest
            && left.largestUnsigned == right.largestUnsigned && left.smallest == right.smallest
            && left.infinite == right.infinite && left.role == right.role && left.status == right.status
    }
}

/// One setting per shape; the defaults differ from the fixture values, so a value that is not read shows.
final class CodecFixtureConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "fixtures" }
    @Setting var profile = CodecFixtures.placeholder
    @Setting var profiles: [FixtureProfile] = []
    @Setting var statusByID: [Int: FixtureStatus] = [:]
    @Setting var status = FixtureStatus.offline
    @Setting var optionalAddress: FixtureAddress? = FixtureAddress(street: "default", postcode: nil, floor: nil)
    @Setting var decimal = Decimal(0)
    @Setting var decimals: [Decimal] = []
    @Setting var dates: [Date] = []
    @Setting var blobs: [String: Data] = [:]
    @Setting var urls: [URL] = []
    @Setting var role = FixtureRole.viewer
    @Setting var matrix: [[Double]] = []
    @Setting var floats: [Float] = []
}

enum CodecFixtures {
    static let joined = Date(timeIntervalSince1970: 1_700_000_000.123)
    static let seen = Date(timeIntervalSinceReferenceDate: 123_456_789.987_654)

    static let address = FixtureAddress(street: "1 Infinite Loop", postcode: "95014", floor: nil)

    static let profile = FixtureProfile(
        name: "Ada \"Countess\" Lovelace ✓", age: 36, height: 1.0, weight: 0.1, ratio: 2.5e-8, isAdmin: true,
        nickname: nil, address: address,
        previous: [FixtureAddress(street: "St James's Square", postcode: nil, floor: 2), address],
        tags: ["math"], scores: [1: 1.5, 20: -3, 300: 1e300], labels: ["a": [1, 2], "": []],
        balance: Decimal(string: "12345.6789")!, preciseBalance: Decimal(string: "3.14159265358979323846")!,
        joined: joined, lastSeen: seen, avatar: Data([0, 1, 2, 253, 254, 255]),
        homepage: URL(string: "https://example.com/ada?lang=en#top")!,
        links: [URL(string: "file:///tmp/a%20b")!, URL(string: "mailto:ada@example.com")!],
        largest: .max, largestUnsigned: .max, smallest: .min, notANumber: .nan, infinite: -.infinity,
        role: .owner,
        status: .nested(address, [.offline, .away(since: seen, message: "brb"), .busy(3, until: joined)]))

    static let placeholder = FixtureProfile(
        name: "", age: 0, height: 0, weight: 0, ratio: 0, isAdmin: false, nickname: "none",
        address: FixtureAddress(street: "", postcode: nil, floor: nil), previous: [], tags: [], scores: [:],
        labels: [:], balance: 0, preciseBalance: 0, joined: Date(timeIntervalSince1970: 0), lastSeen: nil,
        avatar: Data(), homepage: URL(string: "https://example.org")!, links: [], largest: 0, largestUnsigned: 0,
        smallest: 0, notANumber: 0, infinite: 0, role: .viewer, status: .offline)

    /// Puts the fixture values into `config`.
    static func assign(to config: CodecFixtureConfig) {
        config.profile = profile
        var second = profile
        second.name = "Grace"
        second.nickname = "Amazing"
        second.status = .away(since: joined, message: nil)
        config.profiles = [profile, second]
        config.statusByID = [7: .busy(1, until: seen), -1: .offline]
        config.status = .away(since: joined, message: "at lunch")
        config.optionalAddress = nil
        config.decimal = Decimal(string: "-0.000123456789012345678901234567890")!
        config.decimals = [Decimal(string: "100")!, Decimal(string: "1e30")!, Decimal(string: "0.5")!]
        config.dates = [joined, seen, Date(timeIntervalSinceReferenceDate: 0)]
        config.blobs = ["empty": Data(), "bytes": Data("héllo".utf8)]
        config.urls = [URL(string: "https://example.com")!, URL(string: "relative/path")!]
        config.role = .editor
        config.matrix = [[1, 2.5], [], [-0.0, 1e-5, .infinity]]
        config.floats = [0.1, 2, 3.4028235e38, .leastNonzeroMagnitude]
    }

    /// Assigns every setting of `source` to `target`.
    static func copy(_ source: CodecFixtureConfig, to target: CodecFixtureConfig) {
        target.profile = source.profile
        target.profiles = source.profiles
        target.statusByID = source.statusByID
        target.status = source.status
        target.optionalAddress = source.optionalAddress
        target.decimal = source.decimal
        target.decimals = source.decimals
        target.dates = source.dates
        target.blobs = source.blobs
        target.urls = source.urls
        target.role = source.role
        target.matrix = source.matrix
        target.floats = source.floats
    }

    /// A `Decimal` as the codec of 2026-11-21 stored it: through its `Double`, so that more than 17
    /// significant digits were lost (the fixtures keep what it wrote, lossy or not).
    static func storedByEarlierCodec(_ decimal: Decimal) -> Decimal {
        Decimal(string: Double(decimal.description)!.description)!
    }

    /// The names of the settings of `config` that do not hold the fixture values as the earlier codec
    /// stored them.
    static func differences(in config: CodecFixtureConfig) -> [String] {
        let expected = CodecFixtureConfig(store: InMemoryStore())
        assign(to: expected)
        func lossy(_ profile: FixtureProfile) -> FixtureProfile {
            var profile = profile
            profile.balance = storedByEarlierCodec(profile.balance)
            profile.preciseBalance = storedByEarlierCodec(profile.preciseBalance)
            return profile
        }
        expected.profile = lossy(expected.profile)
        expected.profiles = expected.profiles.map(lossy)
        expected.decimal = storedByEarlierCodec(expected.decimal)
        expected.decimals = expected.decimals.map(storedByEarlierCodec)
        var differ: [String] = []
        if config.profile != expected.profile { differ.append("profile") }
        if config.profiles != expected.profiles { differ.append("profiles") }
        if config.statusByID != expected.statusByID { differ.append("statusByID") }
        if config.status != expected.status { differ.append("status") }
        if config.optionalAddress != expected.optionalAddress { differ.append("optionalAddress") }
        if config.decimal != expected.decimal { differ.append("decimal") }
        if config.decimals != expected.decimals { differ.append("decimals") }
        if config.dates != expected.dates { differ.append("dates") }
        if config.blobs != expected.blobs { differ.append("blobs") }
        if config.urls != expected.urls { differ.append("urls") }
        if config.role != expected.role { differ.append("role") }
        if config.matrix != expected.matrix { differ.append("matrix") }
        if config.floats != expected.floats { differ.append("floats") }
        return differ
    }
}

/// A JSON form of a ``StoredValue`` tree that keeps every case and bit: `{"int": "5"}`, `{"date": "…"}`, so
/// that the in-memory form of a fixture can be rebuilt exactly.
enum TaggedStoredValue {
    static func tag(_ value: StoredValue) -> StoredValue {
        switch value {
        case .null: .dictionary(["null": .bool(true)])
        case .bool(let bool): .dictionary(["bool": .bool(bool)])
        case .int(let number): .dictionary(["int": .string(String(number))])
        case .uint(let number): .dictionary(["uint": .string(String(number))])
        case .double(let number): .dictionary(["double": .string(String(number.bitPattern, radix: 16))])
        case .number(let text): .dictionary(["number": .string(text)])
        case .string(let text): .dictionary(["string": .string(text)])
        case .data(let data): .dictionary(["data": .string(data.base64EncodedString())])
        case .date(let date):
            .dictionary(["date": .string(String(date.timeIntervalSinceReferenceDate.bitPattern, radix: 16))])
        case .array(let elements): .dictionary(["array": .array(elements.map(tag))])
        case .dictionary(let members): .dictionary(["dictionary": .dictionary(members.mapValues(tag))])
        }
    }

    struct Malformed: Error {}

    static func untag(_ tagged: StoredValue) throws -> StoredValue {
        guard case .dictionary(let wrapper) = tagged, wrapper.count == 1, let (tag, payload) = wrapper.first else {
            throw Malformed()
        }
        switch (tag, payload) {
        case ("null", _): return .null
        case ("bool", .bool(let bool)): return .bool(bool)
        case ("int", .string(let text)): return .int(try Int64(text).orThrow())
        case ("uint", .string(let text)): return .uint(try UInt64(text).orThrow())
        case ("double", .string(let bits)): return .double(Double(bitPattern: try UInt64(bits, radix: 16).orThrow()))
        case ("number", .string(let text)): return .number(text)
        case ("string", .string(let text)): return .string(text)
        case ("data", .string(let text)): return .data(try Data(base64Encoded: text).orThrow())
        case ("date", .string(let bits)):
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(bitPattern: try UInt64(bits, radix: 16).orThrow())))
        case ("array", .array(let elements)): return .array(try elements.map(untag))
        case ("dictionary", .dictionary(let members)): return .dictionary(try members.mapValues(untag))
        default: throw Malformed()
        }
    }
}

extension Optional {
    fileprivate func orThrow() throws -> Wrapped {
        guard let self else { throw TaggedStoredValue.Malformed() }
        return self
    }
}
