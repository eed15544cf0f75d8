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
