// Statements that use configs made elsewhere (`app`, `config`, `twitter`, a JSON file store `store`): inside a
// function that is not isolated to an actor, as a server's or a library's code is, so that the data-race checks
// apply as they would there.
import Foundation
import StorableConfig

final class AppConfig: StorableConfig {
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var selectedHobbies: [String] = []
}

final class TwitterConfig: StorableConfig {
    @Setting var userName = ""
    @Setting(secret: true) var apiToken = ""
}

/// A logger with swift-log's `warning(_:)`.
struct Logger: Sendable {
    func warning(_ message: String) {}
}

func log(_ message: String) {}
func render(_ text: String) {}
func scheduleRender() {}

func example(app: AppConfig, config: AppConfig, twitter: TwitterConfig, store: JSONFileStore, logger: Logger)
    async throws
{
    // example
}
