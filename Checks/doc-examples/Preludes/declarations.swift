// The configs that the guides declare (Docs/GettingStarted.md), and what their snippets call; the block at the
// top level of a program, after them.
import Foundation
import StorableConfig

final class AppConfig: StorableConfig {
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var selectedHobbies: [String] = []
    @Setting var nickname: String? = nil
    @Setting var theme = Theme.system
}

enum Theme: String, Codable, Sendable { case light, dark, system }

final class TwitterConfig: StorableConfig {
    @Setting var userName = ""
    @Setting(secret: true) var apiToken = ""
}

func showWelcome() {}

// example
