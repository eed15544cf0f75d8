// A declaration of a setting, and the types it uses, in a config's body.
import Foundation
import StorableConfig

final class AppConfig: StorableConfig {
    // example
}
