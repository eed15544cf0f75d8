import Foundation
import Testing

@testable import StorableConfig

final class CounterConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "concurrency" }
    @Setting var names: [String] = []
    @Setting var last = ""
    @Setting var a = 0
    @Setting var b = 0
}

struct ConcurrencyTests {
    @Test(arguments: [StoreKind.memory, .jsonFile])
    func manyTasksWritingDifferentSettingsLoseNothing(kind: StoreKind) async throws {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let configs = (0..<4).map { _ in CounterConfig(store: store) }
        let writes = kind == .memory ? 2000 : 100
        await withTaskGroup(of: Void.self) { group in
            for (index, config) in configs.enumerated() {
                group.addTask {
                    for round in 1...writes {
                        if index % 2 == 0 { config.a = round } else { config.b = round }
                        _ = config.a + config.b
                    }
                }
            }
        }
        for config in configs {
            #expect(config.a == writes)
            #expect(config.b == writes)
        }
        let relaunched = CounterConfig(store: kind == .memory ? store : fixture.open())
        #expect(relaunched.a == writes)
        #expect(relaunched.b == writes)
    }

    @Test func concurrentWritersOfOneSettingConvergeOnTheStoresLastValue() async throws {
        let store = InMemoryStore()
        let configs = (0..<4).map { _ in CounterConfig(store: store) }
        await withTaskGroup(of: Void.self) { group in
            for (index, config) in configs.enumerated() {
                group.addTask {
                    for round in 0..<2000 { config.last = "writer \(index) round \(round)" }
                }
            }
        }
        let stored = try #require(store.value(forKey: configs[0].$last.key))
        for config in configs {
            #expect(StoredValue.string(config.last) == stored)
        }
    }

    @Test func readersNeverSeeATornValue() async throws {
        let config = CounterConfig(store: InMemoryStore())
        let lists = (0..<8).map { length in (0..<(length * 10)).map { "item \(length) \($0)" } }
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for round in 0..<3000 { config.names = lists[round % lists.count] }
                return true
            }
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<3000 where !lists.contains(config.names) && !config.names.isEmpty {
                        return false
                    }
                    return true
                }
            }
            for await intact in group {
                #expect(intact)
            }
        }
    }

    @Test func configsCreatedAndDroppedWhileOthersWriteDoNotCrash() async {
        let store = InMemoryStore()
        let writer = CounterConfig(store: store)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<2000 { writer.a = round }
            }
            group.addTask {
                for _ in 0..<300 {
                    let config = CounterConfig(store: store)
                    _ = config.a
                }
            }
        }
        #expect(CounterConfig(store: store).a == 1999)
    }
}

/// Eight settings of one config, which share the config's lock.
private final class SharedLockConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "concurrency" }
    @Setting var s0 = 0
    @Setting var s1 = 0
    @Setting var s2 = 0
    @Setting var s3 = 0
    @Setting var s4 = 0
    @Setting var s5 = 0
    @Setting var s6 = 0
    @Setting var s7 = 0

    func set(_ index: Int, _ value: Int) {
        switch index {
        case 0: s0 = value
        case 1: s1 = value
        case 2: s2 = value
        case 3: s3 = value
        case 4: s4 = value
        case 5: s5 = value
        case 6: s6 = value
        default: s7 = value
        }
    }

    var all: [Int] { [s0, s1, s2, s3, s4, s5, s6, s7] }
}

struct SharedConfigLockTests {
    /// The settings of one config share its lock: threads assigning and reading different settings, observers that
    /// assign other settings of the same config from inside their call, batches, config-wide observers coming and
    /// going, and configs of the class created and dropped meanwhile (whose settings take the lock shared by every
    /// unbound setting until they are bound) must neither deadlock nor lose a write.
    @Test func settingsOfOneConfigUsedOnManyThreadsAtOnceNeitherDeadlockNorLoseAWrite() {
        let store = InMemoryStore()
        let config = SharedLockConfig(store: store)
        let rounds = 400
        let echoes = Locked(0)
        // An observer of s0 writes s7 (another setting, the same lock) from inside its call.
        let echo = config.$s0.observe { value in
            config.s7 = value
            echoes.withLock { $0 += 1 }
        }
        let finished = finishes(within: 60) {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for round in 1...rounds {
                    switch thread {
                    case 0:
                        config.s0 = round
                    case 1...5:
                        if round % 10 == 0 {
                            config.batch {
                                config.set(thread, round)
                                config.set(thread, round)
                            }
                        } else {
                            config.set(thread, round)
                        }
                    case 6:
                        // Config-wide observers come and go while the others write.
                        let token = config.observe { _ in _ = config.all }
                        _ = config.all
                        token.cancel()
                    default:
                        // Configs of the class made and dropped: their settings start on the shared unbound lock.
                        let other = SharedLockConfig(store: store)
                        _ = other.all
                    }
                }
            }
        }
        withExtendedLifetime(echo) {}
        #expect(finished)
        #expect(config.s0 == rounds)
        #expect(config.s7 == rounds)
        for index in 1...5 { #expect(config.all[index] == rounds) }
        #expect(echoes.withLock { $0 } == rounds)
        let relaunched = SharedLockConfig(store: store)
        #expect(relaunched.all[1...5].allSatisfy { $0 == rounds })
    }
}
