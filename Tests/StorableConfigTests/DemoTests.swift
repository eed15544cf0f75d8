import Foundation
import StorableConfig
import Testing

/// `storable-config-demo` run as a separate process, each test with a HOME of its own.
final class DemoHome {
    let directory = TemporaryDirectory()

    var settingsFile: URL {
        directory.url.appendingPathComponent(".config/storable-config-demo/settings.json")
    }

    @discardableResult
    func run(_ arguments: String...) throws -> ChildResult {
        try run(arguments)
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildResult {
        try runProduct(
            "storable-config-demo", arguments, environment: ["HOME": directory.url.path].merging(environment) { $1 },
            removing: environment["XDG_CONFIG_HOME"] == nil ? ["XDG_CONFIG_HOME"] : [])
    }

    /// Runs the demo in `workingDirectory` (default: this home), with `input` on a pipe as its standard input.
    func run(_ arguments: [String], input: Data, in workingDirectory: URL? = nil) throws -> ChildResult {
        try runProduct(
            "storable-config-demo", arguments, environment: ["HOME": directory.url.path], removing: ["XDG_CONFIG_HOME"],
            input: input, workingDirectory: workingDirectory ?? directory.url)
    }

    /// Every path under this home, relative to it, sorted.
    func contents() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory.url.path)
        return (enumerator?.allObjects as? [String] ?? []).sorted()
    }

    func settings() throws -> [String: Any] {
        try jsonObject(at: settingsFile)
    }
}

struct DemoTests {
    @Test func theFirstRunIsAFirstLaunchAndTheSecondIsNot() throws {
        let home = DemoHome()
        let first = try home.run()
        #expect(first.status == 0)
        #expect(first.output.hasPrefix("First launch"))
        #expect(first.output.contains(home.settingsFile.path))
        #expect(first.output.contains("app.isFirstLaunch"))
        let second = try home.run()
        #expect(second.status == 0)
        #expect(second.output.hasPrefix("Welcome back: this is launch 2"))
        #expect(try home.settings()["storable-config-demo.AppConfig.isFirstLaunch"] as? Bool == false)
        #expect(try home.settings()["storable-config-demo.AppConfig.launchCount"] as? Int == 2)
    }

    @Test(arguments: [
        ("twitter.userName", "nkysu1", "nkysu1"),
        ("app.isFirstLaunch", "false", "false"),
        ("app.launchCount", "-5", "-5"),
        ("app.volume", "0.25", "0.25"),
        ("app.selectedHobbies", #"["sleep", "eat"]"#, #"["sleep","eat"]"#),
        // A field left out (`isFullScreen`, which the demo's WindowFrame gained) is the declared default's.
        ("app.window", #"{"width": 1024, "height": 768}"#, #"{"height":768,"isFullScreen":false,"width":1024}"#),
        ("app.theme", "dark", "dark"),
        ("app.nickname", "nick", "nick"),
        ("app.lastLaunch", "2026-11-21T09:30:00+09:00", "2026-11-21T00:30:00Z"),
    ])
    func setStoresTheParsedValueAndGetPrintsItAlone(name: String, value: String, printed: String) throws {
        let home = DemoHome()
        let set = try home.run("set", name, value)
        #expect(set.status == 0, "\(set.errorOutput)")
        let get = try home.run("get", name)
        #expect(get.status == 0)
        #expect(get.output == printed + "\n")
    }

    /// The demo's `WindowFrame` gained `isFullScreen`: a window that an earlier version stored keeps its size, reads
    /// the added field from the declared default, and stays in the file as it was written until it is set.
    @Test func aWindowStoredBeforeItsTypeGainedAFieldKeepsItsSize() throws {
        let home = DemoHome()
        try FileManager.default.createDirectory(
            at: home.settingsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        let written = #"{"storable-config-demo.AppConfig.window": {"height": 768, "width": 1024}}"#
        try written.write(to: home.settingsFile, atomically: true, encoding: .utf8)
        let get = try home.run("get", "app.window")
        #expect(get.status == 0, "\(get.errorOutput)")
        #expect(get.output == #"{"height":768,"isFullScreen":false,"width":1024}"# + "\n")
        #expect(get.errorOutput.isEmpty)
        #expect(try String(contentsOf: home.settingsFile, encoding: .utf8) == written)
    }

    @Test func settingAWindowKeepsTheFieldsANewerVersionStored() throws {
        let home = DemoHome()
        try FileManager.default.createDirectory(
            at: home.settingsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try #"{"storable-config-demo.AppConfig.window": {"height": 768, "width": 1024, "opacity": 0.9}}"#.write(
            to: home.settingsFile, atomically: true, encoding: .utf8)
        let set = try home.run("set", "app.window", #"{"width": 800, "height": 600}"#)
        #expect(set.status == 0, "\(set.errorOutput)")
        let window = try #require(try home.settings()["storable-config-demo.AppConfig.window"] as? [String: Any])
        #expect(window["width"] as? Int == 800)
        #expect(window["opacity"] as? Double == 0.9)
        #expect(try home.run("get", "app.window").output == #"{"height":600,"isFullScreen":false,"width":800}"# + "\n")
    }

    @Test func settingAnOptionalToNullClearsIt() throws {
        let home = DemoHome()
        try home.run("set", "app.nickname", "nick")
        try home.run("set", "app.nickname", "null")
        #expect(try home.run("get", "app.nickname").output == "null\n")
        #expect(try home.settings()["storable-config-demo.AppConfig.nickname"] == nil)
    }

    @Test func listShowsValueDefaultWhetherSetAndKey() throws {
        let home = DemoHome()
        try home.run("set", "twitter.userName", "nkysu1")
        let list = try home.run("list")
        #expect(list.status == 0)
        let lines = list.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("SETTING") == true)
        let twitter = try #require(lines.first { $0.hasPrefix("twitter.userName") })
        #expect(twitter.contains("nkysu1"))
        #expect(twitter.contains(" yes "))
        #expect(twitter.hasSuffix("storable-config-demo.TwitterConfig.userName"))
        let facebook = try #require(lines.first { $0.hasPrefix("facebook.userName") })
        #expect(facebook.contains(" no "))
        #expect(lines.count == 15)
    }

    @Test func listJSONMapsShortNamesToValues() throws {
        let home = DemoHome()
        try home.run("set", "app.selectedHobbies", #"["go"]"#)
        let list = try home.run("list", "--json")
        #expect(list.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [String: Any])
        #expect(object["app.selectedHobbies"] as? [String] == ["go"])
        #expect(object["app.isFirstLaunch"] as? Bool == true)
        #expect((object["app.window"] as? [String: Any])?["width"] as? Int == 800)
        #expect(object.count == 14)
    }

    @Test func resetRestoresDefaultsForOneSettingOneConfigOrEverything() throws {
        let home = DemoHome()
        try home.run("set", "twitter.userName", "t")
        try home.run("set", "facebook.userName", "f")
        try home.run("set", "app.userName", "a")
        try home.run("set", "app.theme", "dark")
        #expect(try home.run("reset", "app.userName").status == 0)
        #expect(try home.run("get", "app.userName").output == "\n")
        #expect(try home.run("get", "app.theme").output == "dark\n")
        #expect(try home.run("reset", "app").status == 0)
        #expect(try home.run("get", "app.theme").output == "system\n")
        #expect(try home.run("get", "twitter.userName").output == "t\n")
        #expect(try home.run("reset").status == 0)
        #expect(try home.run("get", "facebook.userName").output == "\n")
        #expect(try home.settings().isEmpty)
    }

    @Test func storeOptionWorksBeforeOrAfterTheCommand() throws {
        let home = DemoHome()
        let file = home.directory.file("elsewhere.json")
        #expect(try home.run("--store", file.path, "set", "twitter.userName", "x").status == 0)
        #expect(try home.run("get", "twitter.userName", "--store", file.path).output == "x\n")
        #expect(try home.run("get", "twitter.userName").output == "\n")
        #expect(try jsonObject(at: file)["storable-config-demo.TwitterConfig.userName"] as? String == "x")
    }

    @Test func xdgConfigHomeMovesTheDefaultStore() throws {
        let home = DemoHome()
        let configHome = home.directory.file("xdg")
        let result = try home.run(["set", "twitter.userName", "x"], environment: ["XDG_CONFIG_HOME": configHome.path])
        #expect(result.status == 0)
        let file = configHome.appendingPathComponent("storable-config-demo/settings.json")
        #expect(try jsonObject(at: file)["storable-config-demo.TwitterConfig.userName"] as? String == "x")
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path))
    }

    @Test func helpExplainsEveryCommandWithExamples() throws {
        let home = DemoHome()
        let general = try home.run("--help")
        #expect(general.status == 0)
        for command in ["list", "get", "set", "reset", "--store"] {
            #expect(general.output.contains(command))
        }
        let setHelp = try home.run("help", "set")
        #expect(setHelp.output.contains("examples:"))
        #expect(setHelp.output.contains("storable-config-demo set twitter.userName nkysu1"))
        #expect(try home.run("get", "--help").output.contains("usage: storable-config-demo get"))
        #expect(try home.run("help", "history").output.contains("usage: storable-config-demo history"))
        let rollbackHelp = try home.run("rollback", "--help").output
        #expect(rollbackHelp.contains("usage: storable-config-demo rollback"))
        #expect(rollbackHelp.contains("--if-unchanged-since <revision>"))
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path))
    }

    @Test(arguments: [
        (["get", "tumblr.userName"], "unknown config 'tumblr'; configs are app, twitter, facebook, budget"),
        (["get", "app.color"], "unknown setting 'app.color'; settings of app are isFirstLaunch, userName"),
        (["set", "app.isFirstLaunch", "yes"], "expected Bool, true or false"),
        (["set", "app.launchCount", "many"], "expected Int, a whole number"),
        (["set", "app.theme", "purple"], "one of: system, light, dark"),
        (["set", "app.window", "{\"width\": \"wide\"}"], "expected WindowFrame, JSON such as"),
        (["set", "app.userName"], "set is missing an argument: storable-config-demo set <config>.<setting> <value>"),
        (["get"], "get is missing an argument"),
        (["get", "app"], "'app' is a config; name one of its settings"),
        (["get", "a", "b"], "get has too many arguments"),
        (["list", "--verbose"], "unknown option '--verbose'"),
        (["get", "app.userName", "--json"], "--json applies only to list"),
        (
            ["frobnicate"],
            "unknown command 'frobnicate'; commands are list, get, set, reset, export, import, schema, "
                + "appconfig-spec, watch, history, rollback, sync, help"
        ),
        (["--store"], "--store needs a path"),
        (["reset", "tumblr"], "'tumblr' is not <config>.<setting>"),
        (["help", "frobnicate"], "unknown command 'frobnicate'"),
        (["frobnicate", "--help"], "unknown command 'frobnicate'"),
        (["set", "app.userName", "a", "b"], "set has too many arguments"),
        (["set", "app.volume", "1e999"], "expected Double, a number"),
        (["history", "app.volume", "--limit", "0"], "--limit takes a whole number above 0, not '0'"),
        (["get", "app.volume", "--limit", "2"], "--limit applies only to history"),
        (["rollback", "app.volume"], "rollback is missing an argument"),
        (["rollback", "app.volume", "latest"], "rollback takes a revision, a whole number above 0"),
        (
            ["rollback", "app.volume", "3", "--if-unchanged-since", "now"],
            "--if-unchanged-since takes a revision, a whole number above 0 as history prints it, not 'now'"
        ),
        (["rollback", "app.volume", "3", "--if-unchanged-since"], "--if-unchanged-since needs a revision"),
        (["get", "app.volume", "--if-unchanged-since=4"], "--if-unchanged-since applies only to rollback"),
    ])
    func badInputIsAOneLineUsageErrorAndChangesNothing(arguments: [String], message: String) throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "before")
        let before = try Data(contentsOf: home.settingsFile)
        let result = try home.run(arguments)
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput.split(separator: "\n").count == 1)
        #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
        #expect(try Data(contentsOf: home.settingsFile) == before)
    }

    @Test func anUnusableStoreFileIsAFailureNamingThePath() throws {
        let home = DemoHome()
        let result = try home.run("list", "--store", home.directory.url.path)
        #expect(result.status == 1)
        #expect(result.errorOutput.contains(home.directory.url.path))
        #expect(result.errorOutput.contains("directory"))
    }

    @Test func aFailedWriteIsAFailureAndTheFileIsUnchanged() throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "before")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: home.settingsFile.path)
        let result = try home.run("set", "app.userName", "after")
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput.contains(home.settingsFile.path))
        #expect(result.errorOutput.contains("read-only"))
        #expect(try home.settings()["storable-config-demo.AppConfig.userName"] as? String == "before")
    }

    @Test func aCorruptStoreFileIsAFailureAndIsLeftExactlyAsItIs() throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "before")
        let damaged = Data("{ not json".utf8)
        try damaged.write(to: home.settingsFile)
        for arguments in [["get", "app.userName"], ["set", "app.userName", "x"], ["reset"], []] {
            let result = try home.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errorOutput.contains(home.settingsFile.path))
            #expect(result.errorOutput.contains("not valid JSON"))
        }
        #expect(try Data(contentsOf: home.settingsFile) == damaged)
        let siblings = try FileManager.default.contentsOfDirectory(
            atPath: home.settingsFile.deletingLastPathComponent().path)
        #expect(!siblings.contains { $0.contains("corrupt") })
    }

    @Test(.nobodyCanEnterTheTemporaryDirectory) func anUnreadableStoreFileIsAFailureNamingThePathAndIsLeftAsItIs()
        async throws
    {
        let home = TemporaryDirectory()
        let url = home.file("settings.json")
        let content = Data(#"{"storable-config-demo.AppConfig.userName": "before"}"#.utf8)
        try content.write(to: url)
        chmod(url.path, 0o000)
        // Writable by anyone, so that a demo that moved the file aside or replaced it could.
        chmod(home.url.path, 0o777)
        // Everything the child needs is found here: once it is nobody, it may not reach the build folder.
        let programs = TemporaryDirectory()
        let demo = try UserNobody.runnablePath(ofProduct: "storable-config-demo", copyingInto: programs.url)
        let homePath = home.url.path
        let store = url.path
        let result = await #expect(processExitsWith: .exitCode(1), observing: [\.standardErrorContent]) {
            [demo = demo as String, homePath = homePath as String, store = store as String] in
            // Root reads any file; become nobody to be refused like any user, then become the demo.
            UserNobody.becomeIfRoot()
            setenv("HOME", homePath, 1)
            unsetenv("XDG_CONFIG_HOME")
            UserNobody.exec(demo, ["set", "app.userName", "after", "--store", store])
        }
        chmod(url.path, 0o600)
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("cannot open the settings"), "\(message)")
        #expect(message.contains(url.path))
        #expect(message.contains("reading failed: Permission denied"))
        #expect(try Data(contentsOf: url) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.url.path) == ["settings.json"])
    }

    @Test func listJSONExportAndSchemaPrintJSONThatFoundationReads() throws {
        let home = DemoHome()
        let awkward = "line\nbreak \"quoted\" \u{1B}[31m tab\t back\\slash é 名前 👩‍👩‍👧‍👦"
        #expect(try home.run("set", "app.userName", awkward).status == 0)
        #expect(try home.run("set", "twitter.apiToken", "t0ken-secret").status == 0)
        let income = #"[{"id":"s","name":"Salary \"x\"","amount":300000,"order":0}]"#
        #expect(try home.run("set", "budget.incomes", income).status == 0)
        for arguments in [["list", "--json"], ["export"], ["schema"]] {
            let result = try home.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
            #expect(object is [String: Any], "\(arguments)")
            #expect(!result.output.contains("t0ken-secret"), "\(arguments)")
        }
        let list = try JSONSerialization.jsonObject(with: Data(try home.run("list", "--json").output.utf8))
        #expect((list as? [String: Any])?["app.userName"] as? String == awkward)
    }

    /// `watch` on a file that other programs change in every way they do.
    @Test(.timeLimit(.minutes(5)))
    func watchFollowsAnEditARenameADeleteAndRecreateAndABrieflyTruncatedFile() throws {
        let home = DemoHome()
        let url = home.directory.file("watched.json")
        func contents(_ userName: String) -> Data {
            Data(#"{"storable-config-demo.AppConfig.userName": "\#(userName)"}"#.utf8)
        }
        /// Writes the file in place, as an editor that keeps the file's inode does.
        func writeInPlace(_ data: Data) throws {
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: data)
            try handle.close()
        }
        try contents("before").write(to: url)
        let output = Pipe()
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.directory.url.path
        let watcher = try launchProduct(
            "storable-config-demo", ["watch", "--store", url.path], environment: environment, output: output)
        defer {
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        var seen = String(
            decoding: readUntil(output.fileHandleForReading, contains: "watching", timeout: 20), as: UTF8.self)
        func readThrough(_ line: String) {
            seen += String(decoding: readUntil(output.fileHandleForReading, contains: line, timeout: 20), as: UTF8.self)
        }
        // An editor that writes the file in place.
        try writeInPlace(contents("edited"))
        readThrough(#""before" → "edited""#)
        // A program that writes a new file and renames it over the old one.
        let other = home.directory.file("other.json")
        try contents("renamed over").write(to: other)
        try #require(rename(other.path, url.path) == 0)
        readThrough(#""edited" → "renamed over""#)
        // Moved away, and back.
        let aside = home.directory.file("aside.json")
        try #require(rename(url.path, aside.path) == 0)
        readThrough(#""renamed over" → """#)
        try #require(rename(aside.path, url.path) == 0)
        readThrough(#""" → "renamed over""#)
        // Deleted, and written again.
        try FileManager.default.removeItem(at: url)
        readThrough(#""renamed over" → """#)
        try contents("recreated").write(to: url)
        readThrough(#""" → "recreated""#)
        // Emptied and closed (`: > settings.json`), then written a moment later: the empty file is not read as
        // a file without settings.
        try writeInPlace(Data())
        usleep(300_000)
        try writeInPlace(contents("after truncation"))
        readThrough(#""recreated" → "after truncation""#)
        let changes = seen.split(separator: "\n").filter { $0.hasPrefix("app.userName: ") }
        #expect(
            changes == [
                #"app.userName: "before" → "edited""#,
                #"app.userName: "edited" → "renamed over""#,
                #"app.userName: "renamed over" → """#,
                #"app.userName: "" → "renamed over""#,
                #"app.userName: "renamed over" → """#,
                #"app.userName: "" → "recreated""#,
                #"app.userName: "recreated" → "after truncation""#,
            ], "\(seen)")
        #expect(try Data(contentsOf: url) == contents("after truncation"))
        let siblings = try FileManager.default.contentsOfDirectory(atPath: home.directory.url.path)
        #expect(!siblings.contains { $0.contains("corrupt") })
    }

    @Test func aSetValueMayStartWithADash() throws {
        let home = DemoHome()
        #expect(try home.run("set", "twitter.userName", "-bob").status == 0)
        #expect(try home.run("get", "twitter.userName").output == "-bob\n")
        #expect(try home.run("set", "twitter.userName", "--", "--carol").status == 0)
        #expect(try home.run("get", "twitter.userName").output == "--carol\n")
    }

    @Test func twoProcessesSettingDifferentSettingsAtOnceLoseNoWrite() throws {
        let home = DemoHome()
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.directory.url.path
        environment["XDG_CONFIG_HOME"] = nil
        for round in 0..<25 {
            let processes = try [("twitter.userName", "t\(round)"), ("facebook.userName", "f\(round)")].map {
                name, value in
                try launchProduct("storable-config-demo", ["set", name, value], environment: environment)
            }
            for process in processes { process.waitUntilExit() }
            let settings = try home.settings()
            #expect(settings["storable-config-demo.TwitterConfig.userName"] as? String == "t\(round)")
            #expect(settings["storable-config-demo.FacebookConfig.userName"] as? String == "f\(round)")
        }
    }
}
