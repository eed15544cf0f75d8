import Foundation
import StorableConfig

// Reads and in-memory assignments, measured in functions rather than in main.swift's top-level code, whose
// closures are main-actor-isolated and slower. Every operation is out of line and fed the loop index.

@inline(never) func readOursBool(_ config: BenchConfig, _ index: Int) -> Bool { config.isFirstLaunch != (index < 0) }
@inline(never) func readOursInt(_ config: BenchConfig, _ index: Int) -> Int { config.count &+ index }
@inline(never) func readOursString(_ config: BenchConfig, _ index: Int) -> Int { config.userName.utf8.count &+ index }
@inline(never) func readOursProfile(_ config: BenchConfig, _ index: Int) -> Int { config.profile.age &+ index }
@inline(never) func readHandBool(_ defaults: UserDefaults, _ index: Int) -> Bool {
    defaults.isFirstLaunch != (index < 0)
}
@inline(never) func readHandInt(_ defaults: UserDefaults, _ index: Int) -> Int { defaults.count &+ index }
@inline(never) func readHandString(_ defaults: UserDefaults, _ index: Int) -> Int {
    defaults.userName.utf8.count &+ index
}
@inline(never) func readHandProfile(_ defaults: UserDefaults, _ index: Int) -> Int { defaults.profile.age &+ index }

@inline(never) func writeOursBool(_ config: BenchConfig, _ index: Int) { config.isFirstLaunch = index & 1 == 0 }
@inline(never) func writeOursInt(_ config: BenchConfig, _ index: Int) { config.count = index }
@inline(never) func writeOursString(_ config: BenchConfig, _ index: Int) { config.userName = names[index & 7] }
@inline(never) func writeOursProfile(_ config: BenchConfig, _ index: Int) { config.profile = profiles[index & 7] }
@inline(never) func writeHandBool(_ defaults: UserDefaults, _ index: Int) { defaults.isFirstLaunch = index & 1 == 0 }
@inline(never) func writeHandInt(_ defaults: UserDefaults, _ index: Int) { defaults.count = index }
@inline(never) func writeHandString(_ defaults: UserDefaults, _ index: Int) { defaults.userName = names[index & 7] }
@inline(never) func writeHandProfile(_ defaults: UserDefaults, _ index: Int) { defaults.profile = profiles[index & 7] }

let names = (0..<8).map { "user name number \($0)" }
let profiles = (0..<8).map { Profile(name: "profile \($0)", age: $0, tags: ["a", "b"]) }

/// A read of each type against the hand-written `UserDefaults` extension (the core issue: an `Int` at most
/// 0.1×). No read is set against a plain stored property any more: the issue withdrew that target.
func readRows(config: BenchConfig, defaults: UserDefaults, iterations: Int, scale: Int) -> [Row] {
    var rows: [Row] = []
    var sink = 0
    for (name, ours, hand) in [
        ("read Bool", { readOursBool(config, $0) ? 1 : 0 }, { readHandBool(defaults, $0) ? 1 : 0 }),
        ("read Int", { readOursInt(config, $0) }, { readHandInt(defaults, $0) }),
        ("read String", { readOursString(config, $0) }, { readHandString(defaults, $0) }),
        ("read Codable struct", { readOursProfile(config, $0) }, { readHandProfile(defaults, $0) }),
    ] as [(String, (Int) -> Int, (Int) -> Int)] {
        let oursTime = nanosecondsPerOperation(iterations: iterations) { sink &+= ours($0) }
        let handTime = nanosecondsPerOperation(iterations: name.contains("struct") ? 20_000 / scale : 200_000 / scale) {
            sink &+= hand($0)
        }
        rows.append(
            Row(
                operation: name, ours: oursTime, baselineName: "handwritten UserDefaults", baseline: handTime,
                target: name == "read Int" ? .atMost(0.1) : nil))
    }
    consume(sink)
    return rows
}

/// In-memory assignments. The core issue's target for them is against swift-configuration's
/// `MutableInMemoryProvider`, in the Benchmarks package; here an `Int` is set against a `[String: Int]` in a
/// `Mutex` plus a version (the least an assignment with change tracking costs) and the other types against an
/// `Int`, for information, except a struct's earlier target of 2× an `Int`.
func memoryWriteRows(config: BenchConfig, iterations: Int) -> [Row] {
    let writeInt = nanosecondsPerOperation(iterations: iterations) { writeOursInt(config, $0) }
    var rows: [Row] = []
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        let floor = MutexDictionaryFloor()
        let key = config.$count.key
        rows.append(
            Row(
                operation: "write Int (memory)", ours: writeInt, baselineName: "[String: Int] in Mutex + version",
                baseline: nanosecondsPerOperation(iterations: iterations * 10) { floor.write($0, forKey: key) },
                target: nil))
    }
    for (name, write) in [
        ("write Bool (memory)", { writeOursBool(config, $0) }),
        ("write String (memory)", { writeOursString(config, $0) }),
        ("write struct (memory)", { writeOursProfile(config, $0) }),
    ] as [(String, (Int) -> Void)] {
        rows.append(
            Row(
                operation: name, ours: nanosecondsPerOperation(iterations: iterations, write),
                baselineName: "write Int (memory)", baseline: writeInt,
                target: name == "write struct (memory)" ? .atMost(2) : nil))
    }
    return rows
}
