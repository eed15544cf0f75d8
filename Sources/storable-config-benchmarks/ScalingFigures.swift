import Foundation
import StorableConfig

/// The core issue's costs that must follow what changed, not what is alive: an assignment with 1,000 config
/// classes alive on one store against the same with one, the release of 20,000 configs that read a directory
/// source, and a config with three file sources created and released while no other config uses them.
func scalingRows(scale: Int, directory: URL) -> [Row] {
    var rows: [Row] = []

    // One0 assigned on a store where it is the only config, and on one where each of the 1,000 classes of
    // ManyConfigs.swift (One0 among them) has an instance: each class reads a key of its own.
    let alone = One0(store: InMemoryStore())
    let crowdedStore = InMemoryStore()
    let crowd = oneSettingConfigClasses.map { $0.init(store: crowdedStore) }
    let crowded = crowd[0] as! One0
    precondition(crowd.count == 1000 && Set(crowd.map { ObjectIdentifier(type(of: $0)) }).count == 1000)
    let iterations = 200_000 / scale
    // In turns, three times each, so that a moment of load on the machine does not fall on one side only.
    var aloneRuns: [Double] = []
    var crowdedRuns: [Double] = []
    for _ in 0..<3 {
        aloneRuns.append(nanosecondsPerOperation(iterations: iterations) { assignOne(alone, $0) })
        crowdedRuns.append(nanosecondsPerOperation(iterations: iterations) { assignOne(crowded, $0) })
    }
    consume(crowd)
    rows.append(
        Row(
            operation: "write Int (memory), 1,000 config classes alive", ours: median(crowdedRuns),
            baselineName: "one config class alive", baseline: median(aloneRuns), target: .atMost(2)))

    // 20,000 configs of one class reading one directory source, on one store.
    let sourceDirectory = directory.appendingPathComponent("release.d")
    try? FileManager.default.createDirectory(at: sourceDirectory, withIntermediateDirectories: true)
    try? "41".write(to: sourceDirectory.appendingPathComponent("bench.many.One1.s"), atomically: true, encoding: .utf8)
    let count = 20_000
    let store = InMemoryStore()
    StorableConfig.defaultSources = ConfigSources(belowStore: [.directory(sourceDirectory.path)])
    var configs = makeConfigs(count, store)
    StorableConfig.defaultSources = .none
    precondition(configs[0].s == 41 && configs[0].$s.layer == .file, "the directory source is not read")
    let start = now()
    configs.removeAll()
    let released = Double(now() - start)
    rows.append(
        Row(
            operation: "release 20,000 configs with a directory source", ours: released / 1_000_000,
            baselineName: "budget", baseline: 1000, target: .atMost(1), unit: "ms"))

    // A config with a directory, a .env file and a JSON file, no other config reading them: its creation reads
    // and watches all three, its release stops the three watchers.
    let dotEnv = directory.appendingPathComponent("three.env")
    let json = directory.appendingPathComponent("three.json")
    try? "ONE1_S=42\n".write(to: dotEnv, atomically: true, encoding: .utf8)
    try? "{\"bench.many.One1.s\": 43}".write(to: json, atomically: true, encoding: .utf8)
    StorableConfig.defaultSources = ConfigSources(
        aboveStore: [.jsonFile(json.path)], belowStore: [.directory(sourceDirectory.path), .dotEnv(dotEnv.path)])
    defer { StorableConfig.defaultSources = .none }
    precondition(One1(store: store).s == 43, "the JSON source is not read")
    var samples: [Double] = []
    for _ in 0..<max(5, 50 / scale) {
        let start = now()
        consume(One1(store: store))
        samples.append(Double(now() - start))
    }
    rows.append(
        Row(
            operation: "create and release a config with 3 unshared sources", ours: median(samples) / 1000,
            baselineName: "budget", baseline: 1000, target: .atMost(1), unit: "µs/op"))
    return rows
}

@inline(never) func assignOne(_ config: One0, _ index: Int) { config.s = index }

@inline(never) func makeConfigs(_ count: Int, _ store: InMemoryStore) -> [One1] {
    (0..<count).map { _ in One1(store: store) }
}
