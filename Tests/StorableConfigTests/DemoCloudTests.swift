import Foundation
import Testing

/// `--cloud <directory> --device <name>`: demo processes as a user's devices, each with its own settings file,
/// syncing through one simulated cloud directory (Docs/Demo.md, "Two devices, one cloud").
struct DemoCloudTests {
    /// One temporary folder: the cloud directory, and a settings file per device given with `--store`.
    final class Devices {
        let home = DemoHome()
        var cloud: URL { home.directory.file("cloud") }

        func settingsFile(_ device: String) -> URL { home.directory.file("\(device).json") }

        /// Runs the demo as `device`, with its own settings file, online unless `offline`.
        @discardableResult
        func run(_ device: String, offline: Bool = false, _ arguments: String...) throws -> ChildResult {
            let options =
                ["--cloud", cloud.path, "--device", device, "--store", settingsFile(device).path]
                + (offline ? ["--offline"] : [])
            let result = try home.run(options + arguments)
            #expect(result.status == 0, "\(device) \(arguments): \(result.errorOutput)")
            return result
        }

        func get(_ device: String, _ name: String) throws -> String {
            try run(device, "get", name).output
        }

        /// The cloud's files by name, with their bytes.
        func cloudFiles() throws -> [String: Data] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cloud.path)) ?? []
            return try Dictionary(
                uniqueKeysWithValues: names.map { ($0, try Data(contentsOf: cloud.appendingPathComponent($0))) })
        }

        func cloudText(_ key: String) throws -> String {
            try String(contentsOf: cloud.appendingPathComponent(key), encoding: .utf8)
        }

        func stored(_ device: String) throws -> [String: Any] {
            try jsonObject(at: settingsFile(device))
        }
    }

    static let userName = "storable-config-demo.AppConfig.userName"

    @Test func theLaterOfTwoWritesMadeOfflineWinsOnBothDevices() throws {
        let devices = Devices()
        try devices.run("A", offline: true, "set", "app.userName", "ann")
        try devices.run("B", offline: true, "set", "app.userName", "bob")
        #expect(try devices.cloudFiles().isEmpty)
        // A comes back first: its earlier write goes up; then B's later one wins over it, and A takes it.
        #expect(try devices.get("A", "app.userName") == "ann\n")
        #expect(try devices.cloudText(Self.userName).contains(#""value":"ann""#))
        #expect(try devices.get("B", "app.userName") == "bob\n")
        let sync = try devices.run("A", "sync")
        #expect(sync.output.contains(#"app.userName  bob  from simulated iCloud (device "B")"#), "\(sync.output)")
        #expect(try devices.get("A", "app.userName") == "bob\n")
        #expect(try devices.get("B", "app.userName") == "bob\n")
        #expect(try devices.stored("A")[Self.userName] as? String == "bob")
        #expect(try devices.cloudText(Self.userName).contains(#""value":"bob""#))
    }

    @Test func aWriteOnlineOverAnotherDevicesValueWinsEverywhere() throws {
        let devices = Devices()
        try devices.run("A", "set", "app.volume", "0.3")
        try devices.run("B", "set", "app.volume", "0.6")
        #expect(try devices.get("A", "app.volume") == "0.6\n")
        #expect(try devices.get("B", "app.volume") == "0.6\n")
    }

    @Test func aResetOnOneDeviceIsNotBroughtBackByTheOther() throws {
        let devices = Devices()
        try devices.run("A", "set", "app.userName", "ann")
        #expect(try devices.get("B", "app.userName") == "ann\n")
        #expect(try devices.stored("B")[Self.userName] as? String == "ann")
        try devices.run("A", "reset", "app.userName")
        #expect(try devices.cloudText(Self.userName).contains(#""deleted":true"#))
        // B, offline, still holds ann; once back, it takes the deletion instead of bringing ann back.
        #expect(try devices.run("B", offline: true, "get", "app.userName").output == "ann\n")
        #expect(try devices.get("B", "app.userName") == "\n")
        #expect(try devices.stored("B")[Self.userName] == nil)
        #expect(try devices.get("A", "app.userName") == "\n")
        #expect(try devices.cloudText(Self.userName).contains(#""deleted":true"#))
    }

    @Test func aFreshDeviceTakesTheCloudsValuesAndUploadsNoDefault() throws {
        let devices = Devices()
        try devices.run("A", "set", "app.userName", "ann")
        try devices.run("A", "set", "budget.incomes", #"[{"id":"rent","name":"Rent","amount":5,"order":1}]"#)
        let before = try devices.cloudFiles()
        #expect(before.count == 2)
        // C's first launch records itself (a launch record does not sync), and reads the cloud's values.
        let launch = try devices.run("C")
        #expect(launch.output.hasPrefix("First launch"))
        #expect(launch.output.contains(#"as device "C""#))
        #expect(try devices.get("C", "app.userName") == "ann\n")
        #expect(try devices.get("C", "budget.incomes") == #"[{"amount":5,"id":"rent","name":"Rent","order":1}]"# + "\n")
        try devices.run("C", "sync")
        #expect(try devices.cloudFiles() == before)
        #expect(try devices.stored("C")[Self.userName] as? String == "ann")
        #expect(try devices.stored("C")["storable-config-demo.AppConfig.launchCount"] as? Int == 1)
    }

    @Test func recordsInsertedOnTwoDevicesBothSurvive() throws {
        let devices = Devices()
        try devices.run(
            "A", offline: true, "set", "budget.incomes", #"[{"id":"rent","name":"Rent","amount":5,"order":1}]"#)
        try devices.run(
            "B", offline: true, "set", "budget.incomes", #"[{"id":"pay","name":"Pay","amount":9,"order":2}]"#)
        try devices.run("A", "sync")
        try devices.run("B", "sync")
        let both = #"[{"amount":5,"id":"rent","name":"Rent","order":1},{"amount":9,"id":"pay","name":"Pay","order":2}]"#
        #expect(try devices.get("A", "budget.incomes") == both + "\n")
        #expect(try devices.get("B", "budget.incomes") == both + "\n")
    }

    @Test func eachDeviceHasItsOwnSettingsFileUnderTheDefaultFolder() throws {
        let home = DemoHome()
        let cloud = home.directory.file("cloud").path
        #expect(try home.run("--cloud", cloud, "--device", "A", "set", "app.launchCount", "7").status == 0)
        #expect(try home.run("--cloud", cloud, "--device", "B", "get", "app.launchCount").output == "0\n")
        let folder = home.settingsFile.deletingLastPathComponent()
        let fileA = folder.appendingPathComponent("devices/A/settings.json")
        #expect(try jsonObject(at: fileA)["storable-config-demo.AppConfig.launchCount"] as? Int == 7)
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path))
        // A launch record stays on its device: nothing of it reaches the cloud.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: cloud))?.isEmpty ?? true)
    }

    @Test func noArgumentsRunsAsWithoutACloud() throws {
        let home = DemoHome()
        let launch = try home.run()
        #expect(launch.status == 0)
        #expect(launch.output.contains("Settings are stored in JSON file \(home.settingsFile.path):\n"))
    }

    @Test(arguments: [
        (["--device", "A", "list"], "--device applies only with --cloud"),
        (["--offline", "list"], "--offline applies only with --cloud"),
        (["sync"], "sync needs a cloud"),
        (["--cloud", "c", "--device", "../x", "list"], "a device's name is 1 to 64 letters"),
        (["--cloud", "c", "--device", ".A", "list"], "a device's name is 1 to 64 letters"),
        (["--cloud", "c", "--store", "etcd://127.0.0.1:1/", "list"], "an etcd store is shared already"),
        (["--cloud", "c", "sync", "x"], "sync has too many arguments"),
    ])
    func aCloudOptionOutOfPlaceIsAUsageErrorThatCreatesNothing(arguments: [String], message: String) throws {
        let home = DemoHome()
        let result = try home.run(arguments, input: Data())
        #expect(result.status == 2)
        #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
        #expect(try home.contents().isEmpty)
    }

    @Test func aCloudThatIsAFileIsRefused() throws {
        let home = DemoHome()
        let file = home.directory.file("cloud")
        try Data("x".utf8).write(to: file)
        let result = try home.run("--cloud", file.path, "--device", "A", "get", "app.userName")
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("--cloud \(file.path) is a file, not a directory"), "\(result.errorOutput)")
    }
}
