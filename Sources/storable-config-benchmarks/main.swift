// storable-config-benchmarks: StorableConfig against the hand-written UserDefaults code it replaces, in one
// process. Run it in release mode:
//
//   swift run -c release storable-config-benchmarks [--json] [--quick]
//   swift run -c release storable-config-benchmarks --etcd http://127.0.0.1:2379 [--json] [--quick]
//
// With `--etcd`, only EtcdStore's figures, against that cluster (EtcdFigures.swift). With `--sources` or
// `--scaling`, only the file sources' figures (SourceFigures.swift) or those with many configs alive
// (ScalingFigures.swift), for a profiler; with `--cloud`, the figures of settings synced through a key-value cloud
// (CloudFigures.swift). The comparisons with swift-configuration are in Benchmarks/, and
// the first instance against the commit before the core issue is Benchmarks/compare-first-instance.sh.
//
// Each figure is the median of 7 runs of many iterations; every read goes through a non-inlined function
// that takes the loop index, so nothing is hoisted out of a loop or optimised away.
import Foundation
import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let scale = quick ? 10 : 1
let suiteName = "storable-config-benchmarks"
StorableConfig.errorHandler = { error in FileHandle.standardError.write(Data("\(error)\n".utf8)) }

func freshDefaults(_ name: String) -> UserDefaults {
    let defaults = UserDefaults(suiteName: name)!
    defaults.removePersistentDomain(forName: name)
    return defaults
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("storable-config-benchmarks-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

// MARK: First instance, measured in a fresh process each time

func firstInitChild(_ arguments: [String]) -> Never {
    let count = Int(arguments[1]) ?? 100
    let defaults = freshDefaults("\(suiteName)-first-\(getpid())")
    let start = now()
    if arguments[2] == "handwritten" {
        var registered: [String: Any] = [:]
        for index in 0..<count { registered["bench.s\(index)"] = index }
        defaults.register(defaults: registered)
        var sum = 0
        for index in 0..<count { sum &+= defaults.integer(forKey: "bench.s\(index)") }
        consume(sum)
    } else {
        let store = UserDefaultsStore(defaults)
        switch count {
        case 10: consume(Config10(store: store))
        case 1000: consume(Config1000(store: store))
        default: consume(Config100(store: store))
        }
    }
    print(now() - start)
    exit(0)
}

if arguments.first == "first-init" { firstInitChild(arguments) }
if arguments.first == "etcd-observer" { etcdObserverChild(arguments) }

func firstInit(_ count: Int, _ kind: String) -> Double {
    var samples: [Double] = []
    // The core issue's figure is a median of 5 runs, each in a fresh process.
    for _ in 0..<(quick ? 3 : 5) {
        let process = Process()
        // Bundle.main knows this program's path on Linux and on macOS (which has no /proc).
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["first-init", String(count), kind]
        let pipe = Pipe()
        process.standardOutput = pipe
        try! process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        samples.append(
            Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan)
    }
    samples.sort()
    return samples[samples.count / 2]
}

// MARK: Run

let machine =
    "\(ProcessInfo.processInfo.operatingSystemVersionString), \(ProcessInfo.processInfo.activeProcessorCount) cores"
if arguments.contains("--etcd") { runEtcdFigures(arguments, quick: quick, machine: machine) }
if arguments.contains("--sources") {
    let sourceDirectory = temporaryDirectory()
    printTable(
        sourceRows(readIterations: 2_000_000 / scale, scale: scale, directory: sourceDirectory),
        title: "StorableConfig file sources (release build, \(machine))\n")
    try? FileManager.default.removeItem(at: sourceDirectory)
    exit(0)
}
if arguments.contains("--cloud") {
    printTable(
        cloudRows(scale: scale), title: "StorableConfig synced through a key-value cloud (release build, \(machine))\n")
    exit(0)
}
if arguments.contains("--scaling") {
    let scalingDirectory = temporaryDirectory()
    printTable(
        scalingRows(scale: scale, directory: scalingDirectory),
        title: "StorableConfig with many configs alive (release build, \(machine))\n")
    try? FileManager.default.removeItem(at: scalingDirectory)
    exit(0)
}

var rows: [Row] = []
let handDefaults = freshDefaults(suiteName)
handDefaults.registerHandwrittenDefaults()
let memoryConfig = BenchConfig(store: InMemoryStore())
let readIterations = 2_000_000 / scale
rows += readRows(config: memoryConfig, defaults: handDefaults, iterations: readIterations, scale: scale)
rows += memoryWriteRows(config: memoryConfig, iterations: 200_000 / scale)

let defaultsConfig = BenchConfig(store: UserDefaultsStore(freshDefaults("\(suiteName)-ours")))
let defaultsIterations = 20_000 / scale
for (name, ours, hand) in [
    ("write Bool (UserDefaults)", { writeOursBool(defaultsConfig, $0) }, { writeHandBool(handDefaults, $0) }),
    ("write Int (UserDefaults)", { writeOursInt(defaultsConfig, $0) }, { writeHandInt(handDefaults, $0) }),
    ("write String (UserDefaults)", { writeOursString(defaultsConfig, $0) }, { writeHandString(handDefaults, $0) }),
    ("write struct (UserDefaults)", { writeOursProfile(defaultsConfig, $0) }, { writeHandProfile(handDefaults, $0) }),
] as [(String, (Int) -> Void, (Int) -> Void)] {
    rows.append(
        Row(
            operation: name, ours: nanosecondsPerOperation(iterations: defaultsIterations, ours),
            baselineName: "handwritten set", baseline: nanosecondsPerOperation(iterations: defaultsIterations, hand),
            target: .atMost(1.1)))
}

// Durable writes: a 100-key JSON file against UserDefaults set + synchronize on a 100-key suite.
let directory = temporaryDirectory()
let fileStore = try! JSONFileStore(url: directory.appendingPathComponent("settings.json"))
try! fileStore.setValues(
    Dictionary(uniqueKeysWithValues: (0..<96).map { ("bench.filler.\($0)", StoredValue.int(Int64($0))) }),
    removingValuesForKeys: [])
let fileConfig = BenchConfig(store: fileStore)
let durableDefaults = freshDefaults("\(suiteName)-durable")
for index in 0..<96 { durableDefaults.set(index, forKey: "bench.filler.\(index)") }
durableDefaults.registerHandwrittenDefaults()
let durableIterations = 300 / scale
for (name, ours, hand) in [
    (
        "durable write Bool (JSON file)", { writeOursBool(fileConfig, $0) },
        { (index: Int) in
            writeHandBool(durableDefaults, index); durableDefaults.synchronize()
        }
    ),
    (
        "durable write Int (JSON file)", { writeOursInt(fileConfig, $0) },
        { (index: Int) in
            writeHandInt(durableDefaults, index); durableDefaults.synchronize()
        }
    ),
    (
        "durable write String (JSON file)", { writeOursString(fileConfig, $0) },
        { (index: Int) in
            writeHandString(durableDefaults, index); durableDefaults.synchronize()
        }
    ),
    (
        "durable write struct (JSON file)", { writeOursProfile(fileConfig, $0) },
        { (index: Int) in
            writeHandProfile(durableDefaults, index); durableDefaults.synchronize()
        }
    ),
] as [(String, (Int) -> Void, (Int) -> Void)] {
    rows.append(
        Row(
            operation: name, ours: nanosecondsPerOperation(iterations: durableIterations, repeats: 5, ours),
            baselineName: "set + synchronize",
            baseline: nanosecondsPerOperation(iterations: durableIterations, repeats: 5, hand),
            target: .atMost(1.0)))
}

// The same durable write, by hand: the file's bytes to a temporary file, fdatasync, rename, directory fsync.
fileConfig.count = 0
let durableFloor = DurableWriteFloor(
    copying: directory.appendingPathComponent("settings.json").path, key: fileConfig.$count.key)
// The disk's flush time drifts by tens of percent within a minute: the two are measured in alternating
// blocks, so that both see the same disk.
var durableOurs: [Double] = []
var durableFloorTimes: [Double] = []
for _ in 0..<7 {
    durableOurs.append(
        nanosecondsPerOperation(iterations: durableIterations / 3, repeats: 1) { writeOursInt(fileConfig, $0) })
    durableFloorTimes.append(
        nanosecondsPerOperation(iterations: durableIterations / 3, repeats: 1) { durableFloor.replaceFile($0) })
}
rows.append(
    Row(
        operation: "durable write Int (JSON file), alternated", ours: durableOurs.sorted()[3],
        baselineName: "temp file + fdatasync + rename", baseline: durableFloorTimes.sorted()[3],
        target: .atMost(1.1)))

// Init: a config of N settings over UserDefaults against register(defaults:) + N reads.
@inline(never) func initOurs(_ count: Int, _ store: UserDefaultsStore) -> AnyObject {
    switch count {
    case 10: return Config10(store: store)
    case 1000: return Config1000(store: store)
    default: return Config100(store: store)
    }
}
@inline(never) func initHandwritten(_ count: Int, _ defaults: UserDefaults, _ keys: [String]) -> Int {
    var registered: [String: Any] = [:]
    for index in 0..<count { registered[keys[index]] = index }
    defaults.register(defaults: registered)
    var sum = 0
    for index in 0..<count { sum &+= defaults.integer(forKey: keys[index]) }
    return sum
}
let initDefaults = freshDefaults("\(suiteName)-init")
let initStore = UserDefaultsStore(initDefaults)
let initKeys = (0..<1000).map { "bench.s\($0)" }
var initRows: [Int: (first: Double, later: Double, hand: Double)] = [:]
for count in [10, 100, 1000] {
    let first = firstInit(count, "ours")
    let firstHand = firstInit(count, "handwritten")
    let iterations = max(3, (count == 1000 ? 200 : 2000) / scale)
    let later = nanosecondsPerOperation(iterations: iterations) { _ in consume(initOurs(count, initStore)) }
    let hand = nanosecondsPerOperation(iterations: iterations) { _ in
        consume(initHandwritten(count, initDefaults, initKeys))
    }
    initRows[count] = (first, later, hand)
    rows.append(
        Row(
            operation: "init \(count) settings, first instance", ours: first,
            baselineName: "register + reads, new process", baseline: firstHand, target: nil))
    rows.append(
        Row(
            operation: "init \(count) settings, later instance", ours: later, baselineName: "register + reads",
            baseline: hand, target: count == 100 ? .atMost(2) : nil))
}
// The first instance of a 100-setting class in a process where the library is already warm. The core issue's
// target for a first instance is against the commit before it (Benchmarks/compare-first-instance.sh).
let warmFirst = warmFirstInstances(initStore).sorted()
rows.append(
    Row(
        operation: "init 100 settings, first instance, warm", ours: warmFirst[warmFirst.count / 2],
        baselineName: "register + reads", baseline: initRows[100]!.hand, target: nil))
rows.append(
    Row(
        operation: "init 1000 vs 100 settings, later instance", ours: initRows[1000]!.later,
        baselineName: "init 100 settings", baseline: initRows[100]!.later, target: .atMost(11)))

// A batch of 1,000 assignments to a JSON file store, against 1,000 UserDefaults sets and one synchronize.
let batchStore = try! JSONFileStore(url: directory.appendingPathComponent("batch.json"))
let batchConfig = Config1000(store: batchStore)
let batchSettings = batchConfig.allSettings
let batchDefaults = freshDefaults("\(suiteName)-batch")
rows.append(
    Row(
        operation: "1,000 assignments in one batch (JSON file)",
        ours: nanosecondsPerOperation(iterations: max(2, 20 / scale), repeats: 5) { round in
            batchConfig.batch {
                for (index, setting) in batchSettings.enumerated() {
                    try? setting.assign(parsing: String(round &+ index))
                }
            }
        },
        baselineName: "1,000 sets + synchronize",
        baseline: nanosecondsPerOperation(iterations: max(2, 20 / scale), repeats: 5) { round in
            for index in 0..<1000 { batchDefaults.set(round &+ index, forKey: initKeys[index]) }
            batchDefaults.synchronize()
        }, target: nil, unit: "ns/batch"))

// Records: 10,000 incomes; fetch them all, and upsert one.
let recordCount = 10_000 / scale
let budget = BenchBudget(store: InMemoryStore())
let incomeRecords = (0..<recordCount).map {
    BenchIncome(id: "income-\($0)", name: "Income \($0)", amount: $0, order: $0)
}
budget.incomes.upsert(contentsOf: incomeRecords)
let handIncomes = HandwrittenIncomes(defaults: freshDefaults("\(suiteName)-records"))
handIncomes.defaults.set(
    Dictionary(uniqueKeysWithValues: incomeRecords.map { ($0.id, try! JSONEncoder().encode($0)) }),
    forKey: handIncomes.key)
rows.append(
    Row(
        operation: "fetch all of \(recordCount) records (memory)",
        ours: nanosecondsPerOperation(iterations: max(3, 100 / scale), repeats: 5) { _ in consume(budget.incomes.all) },
        baselineName: "UserDefaults [id: Data]",
        baseline: nanosecondsPerOperation(iterations: 3, repeats: 3) { _ in consume(handIncomes.all()) },
        target: nil, unit: "ns/op"))
rows.append(
    Row(
        operation: "upsert one into \(recordCount) records (memory)",
        ours: nanosecondsPerOperation(iterations: max(3, 200 / scale), repeats: 5) { round in
            budget.incomes.upsert(
                BenchIncome(
                    id: "income-\(round % recordCount)", name: "Changed", amount: round, order: round % recordCount))
        },
        baselineName: "UserDefaults [id: Data]",
        baseline: nanosecondsPerOperation(iterations: 3, repeats: 3) { round in
            handIncomes.upsert(
                BenchIncome(
                    id: "income-\(round % recordCount)", name: "Changed", amount: round, order: round % recordCount))
        }, target: nil, unit: "ns/op"))
let fileBudget = BenchBudget(store: try! JSONFileStore(url: directory.appendingPathComponent("records.json")))
fileBudget.incomes.upsert(contentsOf: incomeRecords)
rows.append(
    Row(
        operation: "upsert one into \(recordCount) records (JSON file)",
        ours: nanosecondsPerOperation(iterations: max(3, 20 / scale), repeats: 5) { round in
            fileBudget.incomes.upsert(
                BenchIncome(
                    id: "income-\(round % recordCount)", name: "Changed", amount: round, order: round % recordCount))
        },
        baselineName: "UserDefaults [id: Data] + sync",
        baseline: nanosecondsPerOperation(iterations: 3, repeats: 3) { round in
            handIncomes.upsert(
                BenchIncome(
                    id: "income-\(round % recordCount)", name: "Changed", amount: round, order: round % recordCount))
            handIncomes.defaults.synchronize()
        }, target: nil, unit: "ns/op"))

rows += sourceRows(readIterations: readIterations, scale: scale, directory: directory)
rows += scalingRows(scale: scale, directory: directory)

// Memory: bytes per setting of a config of 1,000 Int settings, beyond the 8-byte value.
let memoryStore = InMemoryStore()
_ = Config1000(store: memoryStore)
var kept: [Config1000] = []
let before = allocatedBytes()
for _ in 0..<10 { kept.append(Config1000(store: memoryStore)) }
let perSetting = Double(allocatedBytes() - before) / 10_000 - Double(MemoryLayout<Int>.size)
consume(kept)
rows.append(
    Row(
        operation: "memory per setting beyond its value", ours: perSetting, baselineName: "budget", baseline: 256,
        target: .atMost(1.0), unit: "bytes"))

for name in [
    suiteName, "\(suiteName)-ours", "\(suiteName)-durable", "\(suiteName)-init", "\(suiteName)-batch",
    "\(suiteName)-records",
] {
    UserDefaults(suiteName: name)?.removePersistentDomain(forName: name)
}
try? FileManager.default.removeItem(at: directory)

if arguments.contains("--json") {
    print(jsonText(rows, machine: machine))
} else {
    printTable(rows, title: "StorableConfig benchmarks (release build, \(machine)); medians of 7 runs\n")
}
