import Foundation
import StorableConfig

struct Profile: Codable, Sendable, Equatable {
    var name: String
    var age: Int
    var tags: [String]
}

/// What the seed article replaces: a UserDefaults extension with a key enum, registered defaults and a
/// computed property per setting.
extension UserDefaults {
    enum Key: String, CaseIterable {
        case isFirstLaunch = "bench.handwritten.isFirstLaunch"
        case count = "bench.handwritten.count"
        case userName = "bench.handwritten.userName"
        case profile = "bench.handwritten.profile"
    }

    func registerHandwrittenDefaults() {
        register(defaults: [
            Key.isFirstLaunch.rawValue: true, Key.count.rawValue: 0, Key.userName.rawValue: "",
            Key.profile.rawValue: try! JSONEncoder().encode(Profile(name: "", age: 0, tags: [])),
        ])
    }

    var isFirstLaunch: Bool {
        get { bool(forKey: Key.isFirstLaunch.rawValue) }
        set { set(newValue, forKey: Key.isFirstLaunch.rawValue) }
    }

    var count: Int {
        get { integer(forKey: Key.count.rawValue) }
        set { set(newValue, forKey: Key.count.rawValue) }
    }

    var userName: String {
        get { string(forKey: Key.userName.rawValue) ?? "" }
        set { set(newValue, forKey: Key.userName.rawValue) }
    }

    var profile: Profile {
        get {
            guard let data = data(forKey: Key.profile.rawValue),
                let profile = try? JSONDecoder().decode(Profile.self, from: data)
            else { return Profile(name: "", age: 0, tags: []) }
            return profile
        }
        set { set(try? JSONEncoder().encode(newValue), forKey: Key.profile.rawValue) }
    }
}

/// The same four settings as a config.
final class BenchConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "bench" }
    @Setting var isFirstLaunch = true
    @Setting var count = 0
    @Setting var userName = ""
    @Setting var profile = Profile(name: "", age: 0, tags: [])
}

struct BenchIncome: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var amount: Int
    var order: Int
}

/// The household-budget article's storage: a UserDefaults dictionary from id to JSON-encoded record.
struct HandwrittenIncomes {
    let defaults: UserDefaults
    let key = "bench.handwritten.incomes"

    func all() -> [BenchIncome] {
        let dictionary = defaults.dictionary(forKey: key) as? [String: Data] ?? [:]
        let decoder = JSONDecoder()
        return dictionary.values.compactMap { try? decoder.decode(BenchIncome.self, from: $0) }.sorted {
            $0.order < $1.order
        }
    }

    func upsert(_ income: BenchIncome) {
        var dictionary = defaults.dictionary(forKey: key) as? [String: Data] ?? [:]
        dictionary[income.id] = try? JSONEncoder().encode(income)
        defaults.set(dictionary, forKey: key)
    }
}

final class BenchBudget: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "bench" }
    @Records(orderedBy: \.order) var incomes: RecordCollection<BenchIncome>
}
