import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The demo over etcd, in separate processes: `--store etcd://…/prefix/`, `watch`, and an unreachable cluster.
extension EtcdStoreTests {
    @Test(.needsEtcd) func theDemoSharesSettingsThroughEtcdAndWatchSeesOtherProcessesChanges() throws {
        let cluster = try EtcdCluster()
        let store = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/fleet/"
        let watchOutput = Pipe()
        let watcher = try demo(["watch", "--store", store], output: watchOutput)
        defer {
            // SIGKILL: a test runner may ignore SIGTERM, and its children inherit that.
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        _ = readUntil(watchOutput.fileHandleForReading, contains: "watching", timeout: 20)
        #expect(try run(["set", "app.userName", "nkysu1", "--store", store]).status == 0)
        #expect(try cluster.get("/fleet/storable-config-demo.AppConfig.userName") == #""nkysu1""#)
        try cluster.put("/fleet/storable-config-demo.AppConfig.volume", "0.4")
        let seen = String(
            decoding: readUntil(watchOutput.fileHandleForReading, contains: "app.volume", timeout: 20), as: UTF8.self)
        #expect(seen.contains(#"app.userName: "" → "nkysu1""#))
        #expect(seen.contains("app.volume: 0.8 → 0.4"))
        #expect(try run(["get", "app.volume", "--store", store]).output == "0.4\n")
    }

    @Test func theDemoNamesTheEndpointsOfAnUnreachableCluster() throws {
        let port = EtcdCluster.freePort()
        let result = try run(["list", "--store", "etcd://127.0.0.1:\(port)"])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("127.0.0.1:\(port)"))
    }

    @Test(.needsEtcd) func theDemoStartsFromItsSnapshotWhileNoMemberAnswers() throws {
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("demo-snapshot.json")
        let cluster = try EtcdCluster()
        let store = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/fleet/"
        let environment = ["STORABLE_CONFIG_ETCD_SNAPSHOT": path.path]
        try cluster.put("/fleet/storable-config-demo.AppConfig.volume", "0.4")
        #expect(try Self.runDemo(["get", "app.volume", "--store", store], environment: environment).output == "0.4\n")
        #expect(Self.mode(of: path) == 0o600)
        cluster.stop(0)
        let offline = try Self.runDemo(["get", "app.volume", "--store", store], environment: environment)
        #expect(offline.status == 0)
        #expect(offline.output == "0.4\n")
        #expect(offline.errorOutput.contains("starts from its snapshot"))
        let write = try Self.runDemo(["set", "app.volume", "0.9", "--store", store], environment: environment)
        #expect(write.status == 1)
        #expect(write.errorOutput.contains("127.0.0.1:\(cluster.members[0].clientPort)"))
        // Without the snapshot, as before: no member answers, exit 1.
        #expect(try Self.runDemo(["get", "app.volume", "--store", store]).status == 1)
    }

    private func demo(_ arguments: [String], output: Pipe) throws -> Process {
        let process = Process()
        process.executableURL = try Self.builtProgram("storable-config-demo")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String, errorOutput: String) {
        try Self.runDemo(arguments)
    }

    /// Runs the demo with `arguments` to its end: its exit status, standard output and standard error.
    static func runDemo(
        _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String, errorOutput: String) {
        try runProgram("storable-config-demo", arguments, environment: environment)
    }

    /// Runs `name`, an executable built beside the tests, with `arguments` to its end: its exit status, standard
    /// output and standard error.
    static func runProgram(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String, errorOutput: String) {
        let output = Pipe()
        let errors = Pipe()
        let process = Process()
        process.executableURL = try builtProgram(name)
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text, errorText)
    }

    private static func builtProgram(_ name: String) throws -> URL {
        #if canImport(Darwin)
            // The test bundle sits beside the products; the running executable is Xcode's or SwiftPM's runner.
            let running =
                Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundleURL
                ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #else
            let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #endif
        var directory = running.deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw EtcdTestError(description: "\(name) is not built")
    }

    /// Reads from `handle` until the text read contains `text`, or `timeout` seconds pass.
    private func readUntil(_ handle: FileHandle, contains text: String, timeout: TimeInterval) -> Data {
        let collected = Locked(Data())
        let done = DispatchSemaphore(value: 0)
        handle.readabilityHandler = { handle in
            let chunk = handle.availableData
            let complete = collected.withLock { data -> Bool in
                data.append(chunk)
                return String(decoding: data, as: UTF8.self).contains(text) || chunk.isEmpty
            }
            if complete { done.signal() }
        }
        _ = done.wait(timeout: .now() + timeout)
        handle.readabilityHandler = nil
        return collected.withLock { $0 }
    }
}
