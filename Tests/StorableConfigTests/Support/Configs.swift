import Foundation

import StorableConfig

// The seed article's three namespaced configs, with a fixed namespace so keys are predictable.
class ExampleNamespaced: StorableConfig {
    override class var namespace: String { "com.example.app" }
}

final class AppConfig: ExampleNamespaced, @unchecked Sendable {
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var selectedHobbies: [String] = []
    @Setting var nickname: String? = nil
}

final class TwitterConfig: ExampleNamespaced {
    @Setting var userName = ""
}

final class FacebookConfig: ExampleNamespaced {
    @Setting var userName = ""
}

/// A config using the default namespace and class name.
final class PlainConfig: StorableConfig {
    @Setting var count = 0
}

/// A subclass of a subclass: inherited settings take the most-derived class's name.
class BaseSettings: StorableConfig {
    override class var namespace: String { "ns" }
    @Setting var theme = "light"
}

final class DerivedSettings: BaseSettings {
    @Setting var fontSize = 12
}

final class RenamedConfig: StorableConfig {
    override class var namespace: String { "ns" }
    override class var configName: String { "Legacy" }
    @Setting var flag = false
}

/// A config that keeps transient state next to its settings.
final class MixedConfig: StorableConfig {
    override class var namespace: String { "ns" }
    var transientCounter = 0
    let label = "mixed"
    @Setting var persisted = 1
}

/// A subclass whose initializer sets a default before `super.init` and writes after it.
final class InitializingConfig: StorableConfig {
    override class var namespace: String { "ns" }
    @Setting var level = 1
    @Setting var launches = 0

    required init(store: any ConfigStore) {
        super.init(store: store)
    }

    init(store: any ConfigStore, defaultLevel: Int) {
        level = defaultLevel
        super.init(store: store)
        launches += 1
    }
}

// Types from the seed article's type matrix.
struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var joined: Date?
    var tags: Set<String> = []
}

final class Account: Codable, Equatable, Sendable {
    let id: Int
    let email: String

    init(id: Int, email: String) {
        self.id = id
        self.email = email
    }

    static func == (lhs: Account, rhs: Account) -> Bool {
        lhs.id == rhs.id && lhs.email == rhs.email
    }
}

enum Theme: String, Codable, Sendable, CaseIterable {
    case light, dark, system
}

enum Layout: Codable, Equatable, Sendable {
    case grid(columns: Int)
    case list
}

/// Every type of the matrix, each as a plain and an optional setting.
final class MatrixConfig: StorableConfig {
    override class var namespace: String { "matrix" }

    @Setting var bool = false
    @Setting var int = 0
    @Setting var string = ""
    @Setting var double = 0.0
    @Setting var float: Float = 0
    @Setting var strings: [String] = []
    @Setting var counts: [String: Int] = [:]
    @Setting var url = URL(string: "https://example.com")!
    @Setting var profile = Profile(name: "", age: 0)
    @Setting var account = Account(id: 0, email: "")
    @Setting var theme = Theme.light
    @Setting var layout = Layout.list
    @Setting var date = Date(timeIntervalSince1970: 0)
    @Setting var data = Data()
    @Setting var int64: Int64 = 0
    @Setting var uint64: UInt64 = 0
    @Setting var int8: Int8 = 0

    @Setting var optionalBool: Bool? = nil
    @Setting var optionalInt: Int? = nil
    @Setting var optionalString: String? = nil
    @Setting var optionalDouble: Double? = nil
    @Setting var optionalFloat: Float? = nil
    @Setting var optionalStrings: [String]? = nil
    @Setting var optionalCounts: [String: Int]? = nil
    @Setting var optionalURL: URL? = nil
    @Setting var optionalProfile: Profile? = nil
    @Setting var optionalAccount: Account? = nil
    @Setting var optionalTheme: Theme? = nil
    @Setting var optionalDate: Date? = nil
    @Setting var optionalData: Data? = nil
    @Setting var optionalInt64: Int64? = nil

    // Optionals whose default is not nil: assigning nil must store "no value".
    @Setting var greeting: String? = "hello"
    @Setting var retries: Int? = 3
    @Setting var favouriteTheme: Theme? = .dark
}
