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
    return rows
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
