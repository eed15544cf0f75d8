import Foundation
import StorableConfig
import StorableConfigCloud

/// A key-value cloud in memory with this device alone on it: what a synced write costs on the device, without
/// the service's own cost (which on Apple platforms is a local cache write too, sent later).
final class MemoryCloud: KeyValueCloud, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Data] = [:]

    func data(forKey key: String) -> Data? { lock.withLock { values[key] } }
    func setData(_ data: Data, forKey key: String) { lock.withLock { values[key] = data } }
    var keys: [String] { lock.withLock { Array(values.keys) } }
    func synchronize() -> Bool { true }
    func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation {
        CloudObservation {}
    }
}

/// The iCloud issue's figures: a synced write against the hand-written sync that apps write today (the value set in
/// `UserDefaults` and in the key-value cloud, as Zephyr does), and against the same write not synced; a read of a
/// synced setting against one not synced.
func cloudRows(scale: Int) -> [Row] {
    let sync = CloudSync(
        cloud: MemoryCloud(), local: UserDefaultsStore(freshDefaults("\(suiteName)-cloud")), device: "bench")
    let synced = BenchConfig(store: sync.store)
    sync.sync(synced)
    let plain = BenchConfig(store: UserDefaultsStore(freshDefaults("\(suiteName)-cloud-plain")))
    let handDefaults = freshDefaults("\(suiteName)-cloud-hand")
    let handCloud = MemoryCloud()
    let iterations = 20_000 / scale
    var sink = 0
    let handwritten: (Int) -> Void = { index in
        handDefaults.set(index, forKey: "bench.BenchConfig.count")
        handCloud.setData(withUnsafeBytes(of: index) { Data($0) }, forKey: "bench.BenchConfig.count")
    }
    let rows = [
        Row(
            operation: "write Int, synced (UserDefaults)",
            ours: nanosecondsPerOperation(iterations: iterations) { writeOursInt(synced, $0) },
            baselineName: "handwritten set + cloud set",
            baseline: nanosecondsPerOperation(iterations: iterations, handwritten)),
        Row(
            operation: "write Int, synced (UserDefaults)",
            ours: nanosecondsPerOperation(iterations: iterations) { writeOursInt(synced, $0) },
            baselineName: "write Int, not synced",
            baseline: nanosecondsPerOperation(iterations: iterations) { writeOursInt(plain, $0) }),
    ]
    // Reads in turns, three times each, so that a moment of load on the machine does not fall on one side only.
    var syncedReads: [Double] = []
    var plainReads: [Double] = []
    for _ in 0..<3 {
        syncedReads.append(nanosecondsPerOperation(iterations: iterations * 50) { sink &+= readOursInt(synced, $0) })
        plainReads.append(nanosecondsPerOperation(iterations: iterations * 50) { sink &+= readOursInt(plain, $0) })
    }
    let readRow = Row(
        operation: "read Int, synced", ours: median(syncedReads), baselineName: "read Int, not synced",
        baseline: median(plainReads), target: .atMost(1.2))
    consume(sink)
    return rows + [readRow]
}
