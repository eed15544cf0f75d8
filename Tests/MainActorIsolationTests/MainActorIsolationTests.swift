// This target is built with `.defaultIsolation(MainActor.self)`, as new Xcode app targets are.
import Foundation
import StorableConfig
import Testing

// The one annotation such a module needs: `nonisolated`, so that the class's inherited `init(store:)`
// stays nonisolated like the base class's.
nonisolated final class AppSettings: StorableConfig {
    override class var namespace: String { "com.example.app" }
    @Setting var isFirstLaunch = true
    @Setting var userName = ""
    @Setting var selectedHobbies: [String] = []
}

struct MainActorIsolationTests {
    @Test func aConfigDeclaredInAMainActorModuleWorksOnTheMainActor() {
        let store = InMemoryStore()
        let config = AppSettings(store: store)
        #expect(config.isFirstLaunch)
        config.isFirstLaunch = false
        config.selectedHobbies = ["swift"]
        let relaunched = AppSettings(store: store)
        #expect(relaunched.isFirstLaunch == false)
        #expect(relaunched.selectedHobbies == ["swift"])
        #expect(relaunched.$userName.key == "com.example.app.AppSettings.userName")
    }

    @Test func aConfigDeclaredInAMainActorModuleWorksOffTheMainActor() async {
        let store = InMemoryStore()
        let value = await Task.detached {
            let config = AppSettings(store: store)
            config.userName = "background"
            return config.userName
        }.value
        #expect(value == "background")
        #expect(AppSettings(store: store).userName == "background")
    }
}
