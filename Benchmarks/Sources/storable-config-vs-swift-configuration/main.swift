// StorableConfig against apple/swift-configuration 1.4.0, in one process: an in-memory assignment against
// MutableInMemoryProvider.setValue (which also notifies watchers), a read against ConfigReader.int(forKey:),
// and a change reaching an async watcher. The first two are the core issue's targets. Each figure is a median
// of 7 runs (of three such medians, measured in turns with the other side, for the first two); each ratio is
// StorableConfig's time over swift-configuration's.
import Configuration
import Dispatch
import Foundation
import StorableConfig
import Synchronization

final class Limits: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "bench" }
    @Setting var maxUploadMB = 0
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

func nanosecondsPerOperation(iterations: Int, _ body: (Int) -> Void) -> Double {
    for index in 0..<min(1000, iterations) { body(index) }
    var samples: [Double] = []
    for _ in 0..<7 {
        let start = now()
        for index in 0..<iterations { body(index) }
        samples.append(Double(now() - start) / Double(iterations))
    }
    return samples.sorted()[3]
}

let quick = CommandLine.arguments.contains("--quick")
let scale = quick ? 10 : 1
let limits = Limits(store: InMemoryStore())
let key: AbsoluteConfigKey = "bench.Limits.maxUploadMB"
let provider = MutableInMemoryProvider(initialValues: [key: 0])
let reader = ConfigReader(provider: provider)

@inline(never) func assignOurs(_ index: Int) { limits.maxUploadMB = index }
@inline(never) func assignTheirs(_ index: Int) { provider.setValue(.init(.int(index), isSecret: false), forKey: key) }
@inline(never) func readOurs(_ index: Int) -> Int { limits.maxUploadMB &+ index }
@inline(never) func readTheirs(_ index: Int) -> Int { (reader.int(forKey: "bench.Limits.maxUploadMB") ?? 0) &+ index }

struct Row {
    let operation: String
    let ours: Double
    let theirs: Double
    let target: Double
}

/// The medians of `ours` and `theirs`, measured in turns, three times each, so that a moment of load on the
/// machine does not fall on one side only. Called from a function, not from top-level code, whose closures are
/// main-actor-isolated and slower.
func inTurns(_ ours: () -> Double, _ theirs: () -> Double) -> (ours: Double, theirs: Double) {
    var oursRuns: [Double] = []
    var theirsRuns: [Double] = []
    for _ in 0..<3 {
        oursRuns.append(ours())
        theirsRuns.append(theirs())
    }
    return (oursRuns.sorted()[1], theirsRuns.sorted()[1])
}

func assignmentRow(_ iterations: Int) -> Row {
    let (ours, theirs) = inTurns(
        { nanosecondsPerOperation(iterations: iterations, assignOurs) },
        { nanosecondsPerOperation(iterations: iterations, assignTheirs) })
    return Row(operation: "in-memory assignment (Int)", ours: ours, theirs: theirs, target: 1.0)
}

func readRow(_ iterations: Int) -> Row {
    var sink = 0
    let (ours, theirs) = inTurns(
        { nanosecondsPerOperation(iterations: iterations) { sink &+= readOurs($0) } },
        { nanosecondsPerOperation(iterations: iterations / 10) { sink &+= readTheirs($0) } })
    consume(sink)
    return Row(operation: "read Int", ours: ours, theirs: theirs, target: 0.1)
}

var rows: [Row] = []
rows.append(assignmentRow(200_000 / scale))
rows.append(readRow(2_000_000 / scale))

/// The last value a watcher received, and when.
final class Received: Sendable {
    let value = Atomic<Int>(-1)
    let at = Atomic<UInt64>(0)
}

/// The time from an assignment to an async watcher receiving the value, one change at a time.
///
/// The watcher notes the time it receives each value, so that the figure is not rounded up to the period of
/// the loop that waits for it (a `Task.yield` takes about as long as a delivery).
func watcherRoundTrip(
    changes: Int, assign: @escaping @Sendable (Int) -> Void,
    watch: @escaping @Sendable (@escaping @Sendable (Int) -> Bool) async throws -> Void
) async throws -> Double {
    let received = Received()
    let watcher = Task {
        try await watch { value in
            received.at.store(now(), ordering: .relaxed)
            received.value.store(value, ordering: .releasing)
            return value >= changes
        }
    }
    // Wait until the watcher has its initial value, then time each change until the watcher receives it.
    while received.value.load(ordering: .acquiring) < 0 { await Task.yield() }
    var samples: [Double] = []
    for value in 1...changes {
        let start = now()
        assign(value)
        while received.value.load(ordering: .acquiring) < value { await Task.yield() }
        samples.append(Double(received.at.load(ordering: .relaxed) - start))
    }
    try await watcher.value
    return samples.sorted()[samples.count / 2]
}

let changes = 20_000 / scale
// The assignments above left large values; each watcher must start below the first change it waits for, or
// it would never be waited for.
limits.maxUploadMB = 0
provider.setValue(.init(.int(0), isSecret: false), forKey: key)
let ourWatch = try await watcherRoundTrip(
    changes: changes, assign: { limits.maxUploadMB = $0 },
    watch: { seen in
        for await value in limits.$maxUploadMB.changes where seen(value) { break }
    })
let theirWatch = try await watcherRoundTrip(
    changes: changes, assign: { provider.setValue(.init(.int($0), isSecret: false), forKey: key) },
    watch: { seen in
        try await reader.watchInt(forKey: "bench.Limits.maxUploadMB") { updates in
            for try await value in updates where seen(value ?? 0) { break }
        }
    })
rows.append(Row(operation: "a change reaching an async watcher", ours: ourWatch, theirs: theirWatch, target: 0.4))

func format(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
}

print(
    "StorableConfig against swift-configuration 1.4.0 (release build, \(ProcessInfo.processInfo.activeProcessorCount) cores)"
)
print("operation                             StorableConfig   swift-configuration   ratio   target")
for row in rows {
    let ratio = row.ours / row.theirs
    let verdict = ratio <= row.target ? "ok (≤ \(row.target)×)" : "MISSED (≤ \(row.target)×)"
    print(
        row.operation.padding(toLength: 38, withPad: " ", startingAt: 0)
            + "\(format(row.ours)) ns".padding(toLength: 17, withPad: " ", startingAt: 0)
            + "\(format(row.theirs)) ns".padding(toLength: 22, withPad: " ", startingAt: 0)
            + "\(format(ratio))×".padding(toLength: 8, withPad: " ", startingAt: 0) + verdict)
}
