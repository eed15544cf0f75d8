import Foundation
import StorableConfig
import Testing

/// `storable-config-demo appconfig-spec`: the AppConfig specification file of the demo's configs.
struct DemoAppConfigTests {
    @Test func appconfigSpecPrintsTheNamedConfigsAndSaysWhatItLeavesOut() throws {
        let home = DemoHome()
        let result = try home.run("appconfig-spec", "app", "twitter", "--bundle-id", "com.example.app")
        #expect(result.status == 0, "\(result.errorOutput)")
        let read = try #require(SpecificationReader.read(result.output), "\(result.output)")
        #expect(read.bundleIdentifier == "com.example.app")
        #expect(read.keyOrder.first == "AppConfig.isFirstLaunch")
        #expect(read.keyOrder.contains("TwitterConfig.userName"))
        #expect(!read.keyOrder.contains { $0.hasPrefix("FacebookConfig.") || $0.hasPrefix("BudgetConfig.") })
        #expect(
            read.keys["AppConfig.volume"]
                == SpecificationReader.Key(
                    element: "float", defaults: ["0.8"], constraint: ["min": "0.0", "max": "1.0"]))
        #expect(read.fields["AppConfig.volume"]?.description == "How loud sounds play, from 0 (silent) to 1.")
        #expect(read.fields["AppConfig.theme"]?.options == ["system": "System", "light": "Light", "dark": "Dark"])
        // Left out: the secret and the structure, each named on standard error with its reason.
        #expect(read.keys["TwitterConfig.apiToken"] == nil)
        #expect(read.keys["AppConfig.window"] == nil)
        let lines = result.errorOutput.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix("left out of the specification: TwitterConfig.apiToken: it is secret") })
        #expect(lines.contains { $0.hasPrefix("left out of the specification: AppConfig.window: the format has no") })
        // A tool that describes the settings writes none.
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path))
    }

    @Test func appconfigSpecWithoutConfigsDescribesThemAll() throws {
        let result = try DemoHome().run("appconfig-spec")
        #expect(result.status == 0)
        let read = try #require(SpecificationReader.read(result.output))
        #expect(read.bundleIdentifier == "com.example.StorableConfigDemo")
        let configNames = Set(read.keyOrder.map { $0.prefix { $0 != "." } })
        #expect(configNames == ["AppConfig", "TwitterConfig", "FacebookConfig", "BudgetConfig"])
        #expect(result.errorOutput.contains("BudgetConfig.incomes: the format has no type for a collection of records"))
    }

    @Test(arguments: [
        (["appconfig-spec", "tumblr"], "unknown config 'tumblr'; configs are app, twitter, facebook, budget"),
        (["list", "--bundle-id", "com.example.app"], "--bundle-id applies only to appconfig-spec"),
        (["appconfig-spec", "--bundle-id"], "--bundle-id needs an identifier"),
    ])
    func badInputIsAUsageError(arguments: [String], message: String) throws {
        let result = try DemoHome().run(arguments)
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
    }

    @Test func helpExplainsAppconfigSpec() throws {
        let home = DemoHome()
        #expect(try home.run("--help").output.contains("appconfig-spec [<config>...] [--bundle-id <id>]"))
        let help = try home.run("help", "appconfig-spec").output
        #expect(help.contains("usage: storable-config-demo appconfig-spec"))
        #expect(help.contains("storable-config-demo appconfig-spec > specfile.xml"))
    }
}
