// Drivers that prove JSONFileStore's guarantees with real processes: a writer killed with SIGKILL at random
// moments, and several processes writing one file at once (and FileSecretStore's: write-secret, add-secret). The tests run the child commands; people run
// the driver commands for figures:
//
//   swift run -c release storable-config-stress crash --kills 200
//   swift run -c release storable-config-stress multiprocess --processes 4 --writes 300
//   swift run -c release storable-config-stress watch --rounds 50
import Foundation
import StorableConfig
import StorableConfigSecrets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    usage: storable-config-stress <command> [options]

    driver commands (print figures):
      crash [--kills N] [--directory D]
          Start a writer, kill it with SIGKILL after a random 0-25 ms, check that the file parses and holds
          every acknowledged write; N times (default 200).
      multiprocess [--processes N] [--writes M] [--directory D]
          N processes each write M keys of their own to one file at once; count the keys lost. The same run
          against a UserDefaults suite is printed for comparison (default 4 x 300).
      lifecycle <memory|file|suite:NAME> [--threads N] [--tasks N] [--rounds N]
          Create, observe, hand over and release configs on N threads and in M tasks at once (configs
          whose initializers suspend among them); exit 1 on a config bound to another's settings. A hang
          is the failure the tests look for (default 4 threads, 8 tasks, 2000 rounds).
      watch [--rounds N] [--directory D]
          Watch a JSON file; replace it N times from outside; print how long each change took to reach an
          observer of the config (default 50).

    child commands (used by the drivers and the tests):
      write-counter <file>                 write key "counter" = 1, 2, 3, ... forever, printing "ack N"
                                           after each write returns
      write-keys <file|suite:NAME> <prefix> <count>
                                           write keys "<prefix>.<i>" = i for i in 1...count
      set <file|suite:NAME> <key> <value>  write one key (JSON if the value is JSON, else a string)
      open-secret-config <file|suite:NAME> <go-file>
                                           once <go-file> exists, create a config with a secret setting and
                                           print "token <value>"
      upsert-records <file> <prefix> <count>
                                           upsert records "<prefix>.<i>" into one collection
      open-race-config <file> <go-file>    open the file, wait until <go-file> exists, then open RaceConfig
                                           (a move and a migration) over it, and print whether this process migrated
      write-secret <directory> <key>       write a ~64 KB secret to a FileSecretStore forever, printing "ack N"
      add-secret <directory> <key> <value> add a secret if the key holds none; print "added" or "present"
    """

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("storable-config-stress: \(message)\n".utf8))
    exit(status)
}

func output(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func option(_ name: String, in arguments: [String], default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let number = Int(arguments[index + 1]), number > 0 else {
        fail("\(name) needs a positive number")
    }
    return number
}

func directoryOption(in arguments: [String]) -> URL {
    if let index = arguments.firstIndex(of: "--directory"), index + 1 < arguments.count {
        return URL(fileURLWithPath: arguments[index + 1], isDirectory: true)
    }
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "storable-config-stress-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func store(for location: String) -> any ConfigStore {
    if location.hasPrefix("suite:") {
        guard let store = UserDefaultsStore(suiteName: String(location.dropFirst(6))) else { fail("bad suite") }
        return store
    }
    do {
        return try JSONFileStore(url: URL(fileURLWithPath: location))
    } catch {
        fail("\(error)", status: 1)
    }
}

/// The path of this program, to start children of it.
let selfPath = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).path

func spawn(_ arguments: [String], output pipe: Pipe? = nil) -> Process {
    let process = Process()
    process.executableURL = URL(
        fileURLWithPath: FileManager.default.fileExists(atPath: selfPath)
            ? selfPath : CommandLine.arguments[0])
    process.arguments = arguments
    process.standardOutput = pipe ?? FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        fail("cannot start a child process: \(error)", status: 1)
    }
    return process
}

/// The highest "ack N" in a writer's output.
func lastAcknowledged(_ data: Data) -> Int {
    String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
        line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil
    }.max() ?? 0
}

/// Reads "counter" from the file the way another program would: parse or fail.
func counterInFile(_ url: URL) -> Int? {
    guard let data = FileManager.default.contents(atPath: url.path) else { return 0 }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
    return (object["counter"] as? Int) ?? 0
}

func runCrash(_ arguments: [String]) {
    let kills = option("--kills", in: arguments, default: 200)
    let directory = directoryOption(in: arguments)
    let url = directory.appendingPathComponent("crash.json")
    var torn = 0
    var lost = 0
    var acknowledged = 0
    let started = Date()
    for _ in 0..<kills {
        let pipe = Pipe()
        let child = spawn(["write-counter", url.path], output: pipe)
        usleep(UInt32.random(in: 0...25_000))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let acked = lastAcknowledged(pipe.fileHandleForReading.readDataToEndOfFile())
        acknowledged = max(acknowledged, acked)
        guard let counter = counterInFile(url) else {
            torn += 1
            continue
        }
        if counter < acked { lost += 1 }
    }
    let seconds = Date().timeIntervalSince(started)
    output("crash: \(kills) kills in \(String(format: "%.1f", seconds)) s; last acknowledged write \(acknowledged)")
    output("crash: files that did not parse: \(torn); kills that lost an acknowledged write: \(lost)")
    if torn > 0 || lost > 0 { exit(1) }
}

struct Item: Codable, Identifiable, Sendable {
    var id: String
    var value: Int
}

/// A config with a record collection, for the record driver.
final class RecordsConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Records var items: RecordCollection<Item>
}

/// A config for the watch driver.
final class WatchedConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var counter = 0
}

func runWatch(_ arguments: [String]) {
    let rounds = option("--rounds", in: arguments, default: 50)
    let directory = directoryOption(in: arguments)
    let url = directory.appendingPathComponent("watched.json")
    let store: JSONFileStore
    do {
        store = try JSONFileStore(url: url)
        try store.startWatching()
    } catch {
        fail("\(error)", status: 1)
    }
    let config = WatchedConfig(store: store)
    let arrived = DispatchSemaphore(value: 0)
    let token = config.$counter.observe { _ in arrived.signal() }
    var latencies: [Double] = []
    var missed = 0
    for round in 1...rounds {
        // Another writer replaces the file the way an editor or another process does: a new file, renamed.
        let text = "{\n  \"\(config.$counter.key)\": \(round)\n}\n"
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            fail("\(error)", status: 1)
        }
        if arrived.wait(timeout: .now() + 5) == .timedOut {
            missed += 1
        } else {
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
        }
    }
    withExtendedLifetime(token) {}
    latencies.sort()
    func percentile(_ fraction: Double) -> String {
        guard !latencies.isEmpty else { return "-" }
        return String(format: "%.2f", latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))])
    }
    output(
        "watch: \(rounds) outside writes; from write to observer: median \(percentile(0.5)) ms, "
            + "p95 \(percentile(0.95)) ms, max \(percentile(1)) ms; missed \(missed)")
}

func runMultiprocess(_ arguments: [String]) {
    let processes = option("--processes", in: arguments, default: 4)
    let writes = option("--writes", in: arguments, default: 300)
    let directory = directoryOption(in: arguments)
    let suite = "storable-config-stress-\(UUID().uuidString)"
    for (name, location) in [
        ("JSONFileStore", directory.appendingPathComponent("multi.json").path),
        ("UserDefaultsStore", "suite:\(suite)"),
    ] {
        let started = Date()
        let children = (0..<processes).map { spawn(["write-keys", location, "p\($0)", String(writes)]) }
        for child in children { child.waitUntilExit() }
        let seconds = Date().timeIntervalSince(started)
        let reader = store(for: location)
        try? reader.reload()
        var kept = 0
        for process in 0..<processes {
            for index in 1...writes where (try? reader.value(forKey: "p\(process).\(index)")) == .int(Int64(index)) {
                kept += 1
            }
        }
        let total = processes * writes
        output(
            "\(name): \(processes) processes x \(writes) writes in \(String(format: "%.2f", seconds)) s: "
                + "\(kept) of \(total) keys kept, \(total - kept) lost")
    }
    UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "write-counter":
    guard arguments.count == 2 else { fail(usage) }
    let store = store(for: arguments[1])
    // Some bulk, so that every write rewrites a file of realistic size (about 20 KB).
    if (try? store.value(forKey: "filler.0")) == nil {
        let line = StoredValue.string(String(repeating: "settings ", count: 20))
        do {
            try store.setValues(
                Dictionary(uniqueKeysWithValues: (0..<100).map { ("filler.\($0)", line) }), removingValuesForKeys: [])
        } catch {
            fail("\(error)", status: 1)
        }
    }
    var counter =
        (try? store.value(forKey: "counter")).flatMap { value -> Int? in
            if case .int(let number) = value { return Int(number) }
            return nil
        } ?? 0
    while true {
        counter += 1
        do {
            try store.setValue(.int(Int64(counter)), forKey: "counter")
        } catch {
            fail("\(error)", status: 1)
        }
        output("ack \(counter)")
    }
case "write-keys":
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail(usage) }
    let store = store(for: arguments[1])
    for index in 1...max(count, 1) {
        do {
            try store.setValue(.int(Int64(index)), forKey: "\(arguments[2]).\(index)")
        } catch {
            fail("\(error)", status: 1)
        }
    }
case "set":
    // set <file|suite:NAME> <key> <text>: one value, parsed as JSON if it is JSON, else a string.
    guard arguments.count == 4 else { fail(usage) }
    let store = store(for: arguments[1])
    let value = (try? StoredValue(jsonText: arguments[3])) ?? .string(arguments[3])
    do {
        try store.setValue(value, forKey: arguments[2])
    } catch {
        fail("\(error)", status: 1)
    }
case "upsert-records":
    // upsert-records <file> <prefix> <count>: upsert records "<prefix>.<i>" one write at a time.
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail(usage) }
    let config = RecordsConfig(store: store(for: arguments[1]))
    for index in 1...max(count, 1) {
        config.items.upsert(Item(id: "\(arguments[2]).\(index)", value: index))
    }
case "open-race-config":
    guard arguments.count == 3 else { fail(usage) }
    let raceStore = store(for: arguments[1])
    while !FileManager.default.fileExists(atPath: arguments[2]) { usleep(200) }
    let config = RaceConfig(store: raceStore)
    let migratedHere = config.migratedBy == ProcessInfo.processInfo.processIdentifier
    output("\(migratedHere ? "migrated" : "found migrated") \(config.fadeDuration) \(config.volume)")
case "open-secret-config":
    // open-secret-config <file> <go-file>: once <go-file> exists, create a config whose secret setting the file
    // may hold in plain form (moved to the secret store beside the file), and print its value.
    guard arguments.count == 3 else { fail(usage) }
    let secretStore = SecretRoutingStore(wrapping: store(for: arguments[1]))
    while !FileManager.default.fileExists(atPath: arguments[2]) { usleep(200) }
    let config = SecretRaceConfig(store: secretStore)
    output("token \(config.token)")
case "write-secret":
    runWriteSecret(arguments)
case "add-secret":
    runAddSecret(arguments)
case "crash":
    runCrash(arguments)
case "multiprocess":
    runMultiprocess(arguments)
case "watch":
    runWatch(arguments)
case "lifecycle":
    runLifeCycle(arguments)
case "--help", "-h", "help":
    output(usage)
default:
    fail(usage)
}
