import Foundation
import StorableConfig

/// The deployment-files issue's two rows: a read of a setting whose value comes from a directory source (the
/// layers are resolved when a source changes, so a read should cost what any read costs), and a reload of a
/// 1,000-setting JSON source, from the renamed file to the last observer told, against parsing the same file
/// with `JSONSerialization` alone.
func sourceRows(readIterations: Int, scale: Int, directory: URL) -> [Row] {
    var rows: [Row] = []
    let sourceDirectory = directory.appendingPathComponent("conf.d")
    try? FileManager.default.createDirectory(at: sourceDirectory, withIntermediateDirectories: true)
    try? "41".write(to: sourceDirectory.appendingPathComponent("BENCH_CONFIG_COUNT"), atomically: true, encoding: .utf8)
    StorableConfig.defaultSources = ConfigSources(belowStore: [.directory(sourceDirectory.path)])
    let fromDirectory = BenchConfig(store: InMemoryStore())
    StorableConfig.defaultSources = .none
    let plainConfig = BenchConfig(store: InMemoryStore())
    precondition(fromDirectory.count == 41 && fromDirectory.$count.layer == .file, "the source is not read")
    var sink = 0
    // Measured in turns, three times each, so that a moment of load on the machine does not fall on one side only.
    var oursRuns: [Double] = []
    var todayRuns: [Double] = []
    for _ in 0..<3 {
        oursRuns.append(nanosecondsPerOperation(iterations: readIterations) { sink &+= readOursInt(fromDirectory, $0) })
        todayRuns.append(nanosecondsPerOperation(iterations: readIterations) { sink &+= readOursInt(plainConfig, $0) })
    }
    consume(sink)
    let ours = median(oursRuns)
    let today = median(todayRuns)
    rows.append(
        Row(
            operation: "read Int from a directory source", ours: ours, baselineName: "read Int (store)",
            baseline: today, target: .atMost(1.2)))

    // A JSON source of 1,000 settings, every value changed by each rename.
    let file = directory.appendingPathComponent("source-1000.json")
    let keys = (0..<1000).map { "bench.Config1000.s\($0)" }
    func document(_ round: Int) -> Data {
        let members = keys.enumerated().map { index, key in "\"\(key)\": \(round * 10_000 + index)" }
        return Data(("{" + members.joined(separator: ", ") + "}").utf8)
    }
    try? document(0).write(to: file)
    StorableConfig.defaultSources = ConfigSources(aboveStore: [.jsonFile(file.path)])
    let config = Config1000(store: InMemoryStore())
    StorableConfig.defaultSources = .none
    let told = Counter()
    let token = config.observe { _ in told.add() }
    let rounds = max(3, 40 / scale)
    var reloads: [Double] = []
    var parses: [Double] = []
    let staging = directory.appendingPathComponent("source-1000.json.new")
    for round in 1...rounds {
        let data = document(round)
        let start = now()
        _ = try? JSONSerialization.jsonObject(with: data)
        parses.append(Double(now() - start))
        try? data.write(to: staging)
        told.reset()
        let renamed = now()
        rename(staging.path, file.path)
        while told.value < 1000 { usleep(50) }
        reloads.append(Double(now() - renamed))
    }
    token.cancel()
    rows.append(
        Row(
            operation: "reload of a 1,000-setting JSON source", ours: median(reloads),
            baselineName: "JSONSerialization parse", baseline: median(parses), target: .atMost(10), unit: "ns/reload"))
    rows += crowdedDirectoryRows(scale: scale, directory: directory)
    return rows
}

/// The deployment-faults issue's rows (item 12): a directory source that holds 100,000 files no setting names
/// (a shared volume, a cache beside the values) costs what the config reads, not what the directory holds. Each
/// against the same directory with only the setting's file, in this run.
func crowdedDirectoryRows(scale: Int, directory: URL) -> [Row] {
    let crowded = directory.appendingPathComponent("crowded.d")
    let lone = directory.appendingPathComponent("lone.d")
    for folder in [crowded, lone] {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? Data("1".utf8).write(to: folder.appendingPathComponent("BENCH_CONFIG_COUNT"))
    }
    let unrelated = 100_000
    for index in 0..<unrelated {
        let descriptor = open(crowded.path + "/unrelated-\(index)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        _ = write(descriptor, "x", 1)
        close(descriptor)
    }
    let runs = max(3, 7 / scale)

    // The first config of a source: it lists the directory and reads the files its settings name.
    func creation(_ folder: URL) -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            StorableConfig.defaultSources = ConfigSources(belowStore: [.directory(folder.path)])
            let start = now()
            let config = BenchConfig(store: InMemoryStore())
            times.append(Double(now() - start))
            StorableConfig.defaultSources = .none
            precondition(config.count == 1, "the source is not read")
            // Released here: the next config is the first of its source again.
        }
        return median(times)
    }
    let createdCrowded = creation(crowded)
    let createdLone = creation(lone)

    // A change to the setting's own file, replaced by a rename, until the config reads it.
    func changeSeen(_ folder: URL) -> Double {
        StorableConfig.defaultSources = ConfigSources(belowStore: [.directory(folder.path)])
        let config = BenchConfig(store: InMemoryStore())
        StorableConfig.defaultSources = .none
        let token = config.observe { _ in }
        defer { token.cancel() }
        var times: [Double] = []
        let staging = folder.appendingPathComponent(".staging")
        for round in 2..<(2 + runs) {
            try? Data("\(round)".utf8).write(to: staging)
            let start = now()
            rename(staging.path, folder.appendingPathComponent("BENCH_CONFIG_COUNT").path)
            while config.count != round { usleep(20) }
            times.append(Double(now() - start))
        }
        return median(times)
    }
    let seenCrowded = changeSeen(crowded)
    let seenLone = changeSeen(lone)

    // The process's CPU time per write in place to a file that no setting names, while a config watches the
    // directory, against the same writes with no config alive.
    func cpuPerWrite(watched: Bool) -> Double {
        var config: BenchConfig?
        if watched {
            StorableConfig.defaultSources = ConfigSources(belowStore: [.directory(crowded.path)])
            config = BenchConfig(store: InMemoryStore())
            StorableConfig.defaultSources = .none
        }
        let writes = 2_000 / scale
        usleep(100_000)
        let before = processCPUTime()
        for index in 0..<writes {
            let descriptor = open(crowded.path + "/unrelated-\(index * 37 % unrelated)", O_WRONLY | O_TRUNC | O_CLOEXEC)
            _ = write(descriptor, "y", 1)
            close(descriptor)
        }
        // The watcher's thread has taken every event by then.
        usleep(300_000)
        let spent = processCPUTime() - before
        withExtendedLifetime(config) {}
        return spent / Double(writes)
    }
    let cpuWatched = cpuPerWrite(watched: true)
    let cpuAlone = cpuPerWrite(watched: false)
    return [
        Row(
            operation: "first config, directory with 100,000 unrelated files", ours: createdCrowded / 1e6,
            baselineName: "with no other file", baseline: createdLone / 1e6, target: .within(200), unit: "ms"),
        Row(
            operation: "change to a setting's file seen, 100,000 unrelated files", ours: seenCrowded / 1e6,
            baselineName: "with no other file", baseline: seenLone / 1e6, target: .within(100), unit: "ms"),
        Row(
            operation: "CPU per write to an unrelated file, watched", ours: cpuWatched / 1e6,
            baselineName: "not watched", baseline: cpuAlone / 1e6, target: .within(1), unit: "ms"),
    ]
}

/// The CPU time this process has used, user and system, in nanoseconds (every thread, the watcher's included).
private func processCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// A count that observers on other threads add to.
private final class Counter: @unchecked Sendable {
    // Guarded by `lock`.
    private var count = 0
    private let lock = NSLock()

    func add() { lock.withLock { count += 1 } }
    func reset() { lock.withLock { count = 0 } }
    var value: Int { lock.withLock { count } }
}
