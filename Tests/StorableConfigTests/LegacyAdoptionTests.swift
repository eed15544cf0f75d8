import Foundation
import StorableConfig
import Testing

/// The seed article's "before" code: a UserDefaults extension with a key enum, `register(defaults:)`, and a
/// computed property per setting, under plain keys.
extension UserDefaults {
    enum SeedKey: String {
        case isFirstLaunch, userName, selectedHobbies
    }

    func registerSeedDefaults() {
        register(defaults: [
            SeedKey.isFirstLaunch.rawValue: true, SeedKey.userName.rawValue: "", SeedKey.selectedHobbies.rawValue: [],
        ])
    }

    var seedIsFirstLaunch: Bool {
        get { bool(forKey: SeedKey.isFirstLaunch.rawValue) }
        set { set(newValue, forKey: SeedKey.isFirstLaunch.rawValue) }
    }

    var seedUserName: String {
        get { string(forKey: SeedKey.userName.rawValue) ?? "" }
        set { set(newValue, forKey: SeedKey.userName.rawValue) }
    }

    var seedSelectedHobbies: [String] {
        get { stringArray(forKey: SeedKey.selectedHobbies.rawValue) ?? [] }
        set { set(newValue, forKey: SeedKey.selectedHobbies.rawValue) }
    }
}

/// The same app, adopting StorableConfig: the plain keys are earlier keys, and their values move in.
final class AdoptingAppConfig: StorableConfig {
    override class var namespace: String { "com.example.seed" }
    @Setting(previousKeys: ["isFirstLaunch"]) var isFirstLaunch = true
    @Setting(previousKeys: ["userName"]) var userName = ""
    @Setting(previousKeys: ["selectedHobbies"]) var selectedHobbies: [String] = []
}

/// The same app, keeping the plain keys, so that code still using the extension sees every new write.
final class SharingAppConfig: StorableConfig {
    @Setting(key: "isFirstLaunch") var isFirstLaunch = true
    @Setting(key: "userName") var userName = ""
    @Setting(key: "selectedHobbies") var selectedHobbies: [String] = []
}

struct LegacyAdoptionTests {
    @Test func anAppThatAdoptsStorableConfigOverUserDefaultsKeepsWhatTheOldCodeStored() throws {
        let suite = "LegacyAdoption-\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        do {
            // The old version of the app, on its first launch and after it.
            let defaults = try #require(UserDefaults(suiteName: suite))
            defaults.registerSeedDefaults()
            #expect(defaults.seedIsFirstLaunch)
            defaults.seedIsFirstLaunch = false
            defaults.seedUserName = "nkysu1"
            defaults.seedSelectedHobbies = ["sleep", "eat"]
            defaults.synchronize()
        }
        // The new version, over the same suite.
        let store = try #require(UserDefaultsStore(suiteName: suite))
        let config = AdoptingAppConfig(store: store)
        #expect(config.isFirstLaunch == false)
        #expect(config.userName == "nkysu1")
        #expect(config.selectedHobbies == ["sleep", "eat"])
        #expect(store.value(forKey: "com.example.seed.AdoptingAppConfig.userName") == .string("nkysu1"))
        #expect(store.value(forKey: "userName") == nil)
    }

    @Test func anAppThatAdoptsStorableConfigOverAJSONFileKeepsWhatTheOldCodeStored() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        do {
            // The same hand-written code over a file: plain keys, a value per property.
            let old = try JSONFileStore(url: url)
            try old.setValue(.bool(false), forKey: "isFirstLaunch")
            try old.setValue(.string("nkysu1"), forKey: "userName")
            try old.setValue(.array([.string("sleep"), .string("eat")]), forKey: "selectedHobbies")
        }
        let config = AdoptingAppConfig(store: try JSONFileStore(url: url))
        #expect(config.isFirstLaunch == false)
        #expect(config.userName == "nkysu1")
        #expect(config.selectedHobbies == ["sleep", "eat"])
        let file = try jsonObject(at: url)
        #expect(file["com.example.seed.AdoptingAppConfig.isFirstLaunch"] as? Bool == false)
        #expect(file["isFirstLaunch"] == nil)
    }

    @Test func explicitKeysShareTheOldKeysWithCodeThatStillUsesThem() throws {
        let suite = "LegacySharing-\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let defaults = try #require(UserDefaults(suiteName: suite))
        defaults.registerSeedDefaults()
        defaults.seedIsFirstLaunch = false
        defaults.seedUserName = "nkysu1"
        let config = SharingAppConfig(store: UserDefaultsStore(defaults))
        #expect(config.isFirstLaunch == false)
        #expect(config.userName == "nkysu1")
        config.selectedHobbies = ["go"]
        config.userName = "renamed"
        #expect(defaults.seedSelectedHobbies == ["go"])
        #expect(defaults.seedUserName == "renamed")
    }
}
