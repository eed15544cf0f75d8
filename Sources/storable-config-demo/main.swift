// The seed article's three namespaced configs, persisted between runs.
// Run it twice: the first run is the first launch, the second is not.
import Foundation
import StorableConfig

final class AppConfig: StorableConfig {
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var selectedHobbies: [String] = []
    @Setting var nickname: String? = nil
}

final class TwitterConfig: StorableConfig { @Setting var userName = "" }
final class FacebookConfig: StorableConfig { @Setting var userName = "" }

let app = AppConfig()
let twitter = TwitterConfig()
let facebook = FacebookConfig()

if app.isFirstLaunch {
    print("First launch: welcome! Recording that you have been here.")
    app.isFirstLaunch = false
} else {
    print("Welcome back: this is not the first launch.")
}

print("Settings, stored in \(app.store):")
func show(_ key: String, _ value: Any) {
    print("  \(key) = \(value)")
}
show(app.$isFirstLaunch.key, app.isFirstLaunch)
show(app.$userName.key, "\"\(app.userName)\"")
show(app.$selectedHobbies.key, app.selectedHobbies)
show(app.$nickname.key, app.nickname.map { "\"\($0)\"" } ?? "nil")
show(twitter.$userName.key, "\"\(twitter.userName)\"")
show(facebook.$userName.key, "\"\(facebook.userName)\"")
