import Foundation
import StorableConfig
import Testing

/// The demo's `--read` and `--read-over`: read-only sources below and above the store, in the demo's order
/// (launch arguments, environment variables, `--read-over`, the store, `--read`, the default; among flags of one
/// kind, a later one wins).
struct DemoSourceTests {
    @Test func listShowsValuesFromADirectoryAndADotEnvFileWithTheirPaths() throws {
        let home = DemoHome()
        let directory = home.directory.file("conf.d")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "from-directory\n".write(
            to: directory.appendingPathComponent("TWITTER_CONFIG_USER_NAME"), atomically: true, encoding: .utf8)
        let env = home.directory.file("dev.env")
        try "# development\nexport APP_CONFIG_USER_NAME='from env file'\n".write(
            to: env, atomically: true, encoding: .utf8)
        let result = try home.run(["list", "--read", directory.path, "--read", env.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        let app = try #require(lines.first { $0.hasPrefix("app.userName ") })
        #expect(app.contains("from env file") && app.contains(" file ") && app.contains(".env file \(env.path) line 2"))
        let twitter = try #require(lines.first { $0.hasPrefix("twitter.userName ") })
        #expect(
            twitter.contains("from-directory") && twitter.contains("file \(directory.path)/TWITTER_CONFIG_USER_NAME"))
        #expect(try home.run("get", "twitter.userName", "--read", directory.path).output == "from-directory\n")
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path), "nothing is written")
    }

    @Test func theOrderIsArgumentsEnvironmentReadOverStoreReadDefaultAndALaterFlagWins() throws {
        let home = DemoHome()
        func directory(_ name: String, _ value: String) throws -> String {
            let url = home.directory.file(name)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try value.write(to: url.appendingPathComponent("APP_CONFIG_USER_NAME"), atomically: true, encoding: .utf8)
            return url.path
        }
        let first = try directory("first", "first-below")
        let second = try directory("second", "second-below")
        let over = try directory("over", "over")
        func userName(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
            let result = try home.run(["get", "app.userName"] + arguments, environment: environment)
            #expect(result.status == 0, "\(result.errorOutput)")
            return result.output.trimmingCharacters(in: .newlines)
        }
        #expect(try userName(["--read", first, "--read", second]) == "second-below")
        #expect(try userName(["--read", second, "--read", first]) == "first-below")
        try home.run("set", "app.userName", "stored")
        #expect(try userName(["--read", first]) == "stored")
        #expect(try userName(["--read", first, "--read-over", over]) == "over")
        #expect(try userName(["--read-over", over], environment: ["APP_CONFIG_USER_NAME": "env"]) == "env")
        #expect(try userName(["--read-over", over, "--app-config-user-name", "argument"]) == "argument")
        // A stored value hides the file below the store; list says so, and reset brings the file's value back.
        let list = try home.run("list", "--read", first).output
        #expect(list.contains("the stored value hides first-below from the file \(first)/APP_CONFIG_USER_NAME"))
        try home.run("reset", "app.userName", "--read", first)
        #expect(try userName(["--read", first]) == "first-below")
    }

    @Test func aPathThatDoesNotExistExitsOneNamingIt() throws {
        let home = DemoHome()
        let missing = home.directory.file("no-such-dir").path
        for flag in ["--read", "--read-over"] {
            let result = try home.run([flag, missing, "list"])
            #expect(result.status == 1)
            #expect(result.errorOutput.contains(missing))
        }
        let bare = try home.run("list", "--read")
        #expect(bare.status == 2)
        #expect(bare.errorOutput.contains("--read needs a path"))
    }

    @Test func helpExplainsTheOrderWithAnExample() throws {
        let help = try DemoHome().run("help").output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("--read <path>"))
        #expect(help.contains("--read-over <path>"))
        #expect(help.contains("launch arguments, environment variables, --read-over, the store, --read, the default"))
    }

    /// `watch --read ./conf.d` prints a change when the kubelet swaps the ConfigMap volume.
    @Test(.timeLimit(.minutes(5))) func watchPrintsAConfigMapSwap() throws {
        let home = DemoHome()
        let volume = try KubeletVolume(at: home.directory.file("conf.d").path, files: ["APP_CONFIG_USER_NAME": "one\n"])
        let output = Pipe()
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.directory.url.path
        environment["XDG_CONFIG_HOME"] = nil
        let watcher = try launchProduct(
            "storable-config-demo", ["watch", "--read", volume.path], environment: environment, output: output)
        defer {
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        var seen = String(
            decoding: readUntil(output.fileHandleForReading, contains: "watching", timeout: 20), as: UTF8.self)
        try volume.update(["APP_CONFIG_USER_NAME": "two\n"])
        seen += String(decoding: readUntil(output.fileHandleForReading, contains: "two", timeout: 10), as: UTF8.self)
        #expect(seen.contains(#"app.userName: "one" → "two""#), "\(seen)")
    }
}
