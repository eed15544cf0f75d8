import Foundation

import StorableConfig

/// Every kind of value a setting holds, with a range, a check and a secret: the settings that the
/// `document-import` and `assign-parsing` fuzz targets give values to.
class FuzzTypesConfig: StorableConfig {
    override class var namespace: String { "fuzz" }
    override class var overrides: ConfigOverrides { .none }

    @Setting var bool = false
    @Setting var int = 0
    @Setting var int8: Int8 = 0
    @Setting var uint64: UInt64 = 0
    @Setting var double = 0.0
    @Setting var float: Float = 0
    @Setting var decimal = Decimal(0)
    @Setting var string = ""
    @Setting var date = Date(timeIntervalSinceReferenceDate: 0)
    @Setting var data = Data()
    @Setting var url = URL(string: "https://example.com")!
    @Setting var strings: [String] = []
    @Setting var counts: [String: Int] = [:]
    @Setting var ids: Set<Int> = []
    @Setting var names: [Int: String] = [:]
    @Setting var theme = FuzzTheme.light
    @Setting var layout = FuzzLayout.list
    @Setting var profile = FuzzProfile(name: "", age: 0)
    @Setting var optionalInt: Int? = nil
    @Setting var optionalDate: Date? = nil
    @Setting var greeting: String? = "hello"
    @Setting(in: 0...1) var volume = 0.5
    @Setting(validate: { $0.count < 3 ? "too short" : nil }, secret: true) var token = "unset"
}

/// The same settings, with the overrides of ``FuzzOverrides/with(_:_:)``.
final class FuzzOverriddenConfig: FuzzTypesConfig {
    override class var overrides: ConfigOverrides { FuzzOverrides.current }
}

/// A config that was renamed, whose settings were renamed, and whose stored values were migrated, with records.
final class FuzzMigratedConfig: StorableConfig {
    override class var namespace: String { "fuzz" }
    override class var previousConfigNames: [String] { ["FuzzOldConfig"] }
    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 2, "fade in seconds, not milliseconds") { values in
                if let milliseconds = try values.value("fadeDuration", as: Int.self) {
                    try values.setValue(Double(milliseconds) / 1000, for: "fadeDuration")
                }
            }
        ]
    }

    @Setting(previousNames: ["fade"]) var fadeDuration = 0.25
    @Setting(previousNames: ["oldLimit"], in: 1...100) var limit = 10
    @Records(orderedBy: \.order) var people: RecordCollection<FuzzPerson>
}

enum FuzzTheme: String, Codable, Sendable, CaseIterable {
    case light, dark, system
}

enum FuzzLayout: Codable, Equatable, Sendable {
    case grid(columns: Int)
    case list
}

struct FuzzProfile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var joined: Date?
    var tags: Set<String> = []
}

struct FuzzPerson: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var order: Int
}

/// The overrides that ``FuzzOverriddenConfig`` reads when it is created: none, but inside ``with(_:_:)``.
enum FuzzOverrides {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var overrides = ConfigOverrides.none

    /// The overrides for a config created now.
    static var current: ConfigOverrides {
        lock.withLock { overrides }
    }

    /// Runs `body`, which creates configs, with `overrides` in force; one at a time, since the tests check
    /// inputs in parallel.
    static func with<Result>(_ overrides: ConfigOverrides, _ body: () throws -> Result) rethrows -> Result {
        creating.lock()
        defer { creating.unlock() }
        lock.withLock { self.overrides = overrides }
        defer { lock.withLock { self.overrides = .none } }
        return try body()
    }

    private static let creating = NSLock()
}
