import Foundation
import StorableConfig
import Testing

/// The demo with overrides from the environment and its arguments, a validated volume and a secret token.
struct DemoOverrideTests {
    @Test func anEnvironmentVariableOrAnArgumentOverridesForOneRunAndIsNotStored() throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "stored")
        let fromEnvironment = try home.run(["get", "app.userName"], environment: ["APP_CONFIG_USER_NAME": "x"])
        #expect(fromEnvironment.output == "x\n")
        #expect(try home.run("--app-config-user-name=y", "get", "app.userName").output == "y\n")
        #expect(try home.run("--app-config-user-name", "z", "get", "app.userName").output == "z\n")
        #expect(try home.run("get", "app.userName").output == "stored\n")
        let list = try home.run(["--app-config-is-first-launch", "list"], environment: ["APP_CONFIG_VOLUME": "0.5"])
        let lines = list.output.split(separator: "\n")
        #expect(lines.first?.contains("SOURCE") == true)
        #expect(lines.contains { $0.hasPrefix("app.isFirstLaunch") && $0.contains(" argument ") })
        #expect(lines.contains { $0.hasPrefix("app.volume") && $0.contains("0.5") && $0.contains(" environment ") })
        #expect(lines.contains { $0.hasPrefix("app.userName") && $0.contains(" stored ") })
        #expect(lines.contains { $0.hasPrefix("twitter.userName") && $0.contains(" default ") })
        // `list --json` keeps its shape: name → effective value.
        let json = try home.run(["list", "--json"], environment: ["APP_CONFIG_VOLUME": "0.5"]).output
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["app.volume"] as? Double == 0.5)
    }

    @Test func anInvalidOverrideIsNamedAndTheStoredValueIsRead() throws {
        let home = DemoHome()
        try home.run("set", "app.volume", "0.3")
        let result = try home.run(["get", "app.volume"], environment: ["APP_CONFIG_VOLUME": "3"])
        #expect(result.status == 0)
        #expect(result.output == "0.3\n")
        #expect(result.errorOutput.contains("APP_CONFIG_VOLUME"))
        #expect(result.errorOutput.contains("0.0...1.0"))
    }

    @Test func anUnknownOptionIsStillAUsageErrorAndAVolumeOutOfRangeIsRefused() throws {
        let home = DemoHome()
        let unknown = try home.run("--app-config-nope=1", "list")
        #expect(unknown.status == 2)
        #expect(unknown.errorOutput.contains("unknown option '--app-config-nope=1'"))
        try home.run("set", "app.volume", "0.3")
        let before = try Data(contentsOf: home.settingsFile)
        let refused = try home.run("set", "app.volume", "2")
        #expect(refused.status == 2)
        #expect(refused.errorOutput.contains("0.0...1.0"))
        #expect(try Data(contentsOf: home.settingsFile) == before)
    }
}
