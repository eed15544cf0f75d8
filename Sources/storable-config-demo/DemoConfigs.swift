import Foundation
import StorableConfig

/// The demo's configs share a fixed namespace, so that keys do not depend on how the binary is named.
class DemoConfig: StorableConfig {
    override class var namespace: String { "storable-config-demo" }
}

/// The seed article's app settings, and a few more types worth showing. The first three read, and move to
/// their keys, the plain keys of the seed article's hand-written UserDefaults code when a store holds them.
final class AppConfig: DemoConfig {
    @Setting(previousKeys: ["isFirstLaunch"]) var isFirstLaunch = true
    @Setting(previousKeys: ["userName"]) var userName = ""
    @Setting(previousKeys: ["selectedHobbies"]) var selectedHobbies: [String] = []
    @Setting var nickname: String? = nil
    @Setting var launchCount = 0
    @Setting var lastLaunch: Date? = nil
    @Setting(in: 0...1, description: "How loud sounds play, from 0 (silent) to 1.") var volume = 0.8
    @Setting(description: "The app's colours: as the system's, or always light or dark.") var theme = Theme.system
    @Setting var window = WindowFrame(width: 800, height: 600, isFullScreen: false)
}

final class TwitterConfig: DemoConfig {
    @Setting var userName = ""
    /// Shown as <redacted> by list, set and export; printed by an explicit get.
    @Setting(secret: true) var apiToken = ""
}

final class FacebookConfig: DemoConfig {
    @Setting var userName = ""
}

/// The household-budget article's records.
final class BudgetConfig: DemoConfig {
    @Setting var currency = "JPY"
    @Records(orderedBy: \.order) var incomes: RecordCollection<Income>
}

struct Income: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var amount: Int
    var order: Int
}

enum Theme: String, Codable, Sendable, CaseIterable {
    case system, light, dark
}

struct WindowFrame: Codable, Sendable, Equatable {
    var width: Int
    var height: Int
    /// Added in a later version of the demo: a window stored before reads it from the declared default
    /// (Docs/SupportedTypes.md, "When your type changes").
    var isFullScreen: Bool
}

/// A config as the command line names it: `app`, `twitter`, `facebook`.
struct NamedConfig {
    let name: String
    let config: StorableConfig

    static func all(store: any ConfigStore) -> [NamedConfig] {
        [
            NamedConfig(name: "app", config: AppConfig(store: store)),
            NamedConfig(name: "twitter", config: TwitterConfig(store: store)),
            NamedConfig(name: "facebook", config: FacebookConfig(store: store)),
            NamedConfig(name: "budget", config: BudgetConfig(store: store)),
        ]
    }
}
