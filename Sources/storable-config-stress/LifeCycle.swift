// The life-cycle driver: configs created, observed, handed to other threads and released there, on many
// threads and tasks at once, over one store. A deadlock, a crash or a config bound to another's settings is
// what it looks for; the tests run it as a child process with a time limit, so that a hang fails the test.
import Foundation
import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A config created and dropped in a tight loop.
final class CycledConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var count = 0
    @Setting var label = ""
}

/// A second class on the same store, so that deliveries cross classes.
final class OtherCycledConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var enabled = false
    @Setting var names: [String] = []
}

/// A config whose initializer suspends before `super.init`, so that its property initializers and the base
/// class's initializer may run on different threads.
final class SuspendingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var title = ""
    @Setting var level = 0

    init(suspendingOver store: any ConfigStore) async {
        await Task.yield()
        super.init(store: store)
    }

    required init(store: any ConfigStore) {
        super.init(store: store)
    }
}

/// The second class that suspends, with settings of other types at the same positions.
final class OtherSuspendingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var level = 0.5
    @Setting var title = false

    init(suspendingOver store: any ConfigStore) async {
        await Task.yield()
        super.init(store: store)
    }

    required init(store: any ConfigStore) {
        super.init(store: store)
    }
}

/// What went wrong, counted across threads.
final class LifeCycleProblems: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    func add(_ message: String) {
        lock.lock()
        if messages.count < 20 { messages.append(message) }
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }
}

/// Configs handed from one thread to another, to be released there.
final class HandOver: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [StorableConfig?] = Array(repeating: nil, count: 8)

    /// Puts `config` in a slot and returns what the slot held, which the caller then releases.
    func swap(_ config: StorableConfig?, at index: Int) -> StorableConfig? {
        lock.lock()
        defer { lock.unlock() }
        let previous = slots[index % slots.count]
        slots[index % slots.count] = config
        return previous
    }
}

func checkBinding(_ config: SuspendingConfig, problems: LifeCycleProblems) {
    if config.$title.key != "stress.SuspendingConfig.title" || config.$level.key != "stress.SuspendingConfig.level" {
        problems.add("a SuspendingConfig bound '\(config.$title.key)' and '\(config.$level.key)'")
    }
}

func checkBinding(_ config: OtherSuspendingConfig, problems: LifeCycleProblems) {
    if config.$title.key != "stress.OtherSuspendingConfig.title"
        || config.$level.key != "stress.OtherSuspendingConfig.level"
    {
        problems.add("an OtherSuspendingConfig bound '\(config.$title.key)' and '\(config.$level.key)'")
    }
}

/// One thread's loop: create, read, write, observe, hand over and release configs.
func cycleOnThread(
    _ worker: Int, rounds: Int, store: any ConfigStore, handOver: HandOver, problems: LifeCycleProblems
) {
    for round in 0..<rounds {
        // The shape that deadlocked: a config made and dropped at once, while other threads do the same.
        _ = CycledConfig(store: store).count
        switch round % 4 {
        case 0:
            let config = CycledConfig(store: store)
            config.count = round
            let token = config.$count.observe { _ in }
            if round % 8 == 0 { token.cancel() }
            // Released on whichever thread takes it next, perhaps with its observer still attached.
            _ = handOver.swap(config, at: worker &+ round)
        case 1:
            let other = OtherCycledConfig(store: store)
            other.enabled.toggle()
            let token = other.observe { _ in }
            _ = handOver.swap(other, at: round)
            withExtendedLifetime(token) {}
        case 2:
            let config = CycledConfig(store: store)
            config.batch {
                config.label = "worker \(worker)"
                config.count += 1
            }
        default:
            _ = handOver.swap(nil, at: worker &+ round)
        }
    }
}

/// One task's loop: configs whose initializers suspend, created in groups of two classes at once, and
/// streams of changes abandoned with their configs.
func cycleInTasks(tasks: Int, rounds: Int, store: any ConfigStore, problems: LifeCycleProblems) async {
    await withTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
            group.addTask {
                for round in 0..<rounds {
                    if (task + round) % 2 == 0 {
                        let config = await SuspendingConfig(suspendingOver: store)
                        checkBinding(config, problems: problems)
                        config.level = round
                    } else {
                        let config = await OtherSuspendingConfig(suspendingOver: store)
                        checkBinding(config, problems: problems)
                        config.level = Double(round)
                    }
                    if round % 16 == 0 {
                        let config = CycledConfig(store: store)
                        let stream = config.$count.changes
                        let reader = Task { for await _ in stream {} }
                        config.count = round
                        reader.cancel()
                    }
                }
            }
        }
    }
}

func runLifeCycle(_ arguments: [String]) {
    guard arguments.count >= 2 else { fail(usage) }
    let threads = option("--threads", in: arguments, default: 4)
    let tasks = option("--tasks", in: arguments, default: 8)
    let rounds = option("--rounds", in: arguments, default: 2000)
    let location = arguments[1]
    let target: any ConfigStore = location == "memory" ? InMemoryStore() : store(for: location)
    let problems = LifeCycleProblems()
    // A setting bound to another class's object reads values of the wrong type: reported here.
    StorableConfig.errorHandler = { error in
        let text = "\(error)"
        if text.contains(" is not ") { problems.add(text) }
    }
    let started = Date()
    let handOver = HandOver()
    let finished = DispatchGroup()
    for worker in 0..<threads {
        finished.enter()
        let thread = Thread {
            cycleOnThread(worker, rounds: rounds, store: target, handOver: handOver, problems: problems)
            finished.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    finished.enter()
    Task {
        await cycleInTasks(tasks: tasks, rounds: max(rounds / 8, 1), store: target, problems: problems)
        finished.leave()
    }
    finished.wait()
    for index in 0..<8 { _ = handOver.swap(nil, at: index) }
    let seconds = Date().timeIntervalSince(started)
    let found = problems.all
    guard found.isEmpty else {
        fail("life cycle: \(found.count) problem(s):\n" + found.joined(separator: "\n"), status: 1)
    }
    output(
        "lifecycle: \(threads) threads x \(rounds) rounds and \(tasks) tasks over \(location) in "
            + "\(String(format: "%.2f", seconds)) s: no problem")
}
