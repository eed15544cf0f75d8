import Foundation
import Testing

@testable import StorableConfig

/// Record changes made on several threads at once, through one config or several: each is a read-modify-write of
/// the collection's stored dictionary, and none may write back a dictionary that misses another's record.
struct RecordsConcurrencyTests {
    /// A store as a third party writes one: the three required methods, so `updateValues` is the protocol's default
    /// (read, transform, write) and `updateAtomicity` is `.withinProcess`. A hook runs once inside the first read of
    /// a key, after the value is read, on the reading thread.
    final class ThreeMethodStore: ConfigStore, @unchecked Sendable {
        private let values = Locked<[String: StoredValue]>([:])
        private let hooks = Locked<[String: () -> Void]>([:])

        func once(reading key: String, _ hook: @escaping () -> Void) { hooks.withLock { $0[key] = hook } }

        func value(forKey key: String) -> StoredValue? {
            let value = values.withLock { $0[key] }
            hooks.withLock { $0.removeValue(forKey: key) }?()
            return value
        }
        func setValue(_ value: StoredValue, forKey key: String) { values.withLock { $0[key] = value } }
        func removeValue(forKey key: String) { _ = values.withLock { $0.removeValue(forKey: key) } }
    }

    @Test(arguments: StoreKind.allCases)
    func threadsUpsertingDifferentRecordsOfOneCollectionLoseNone(kind: StoreKind) {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            let budget = BudgetConfig(store: store)
            for index in 0..<50 { budget.expenses.upsert(Expense(id: thread * 1000 + index, label: "\(thread)")) }
        }
        #expect(BudgetConfig(store: store).expenses.count == 200)
        #expect(BudgetConfig(store: fixture.open()).expenses.count == 200)
    }

    /// Another thread upserts a record while this thread's upsert has read the dictionary and not yet written it:
    /// on a store whose read-modify-write is the default one, the other thread's upsert waits for this one, then
    /// adds its record to what this one wrote. (Failed before 2026-11-29: this upsert wrote back the dictionary it
    /// had read, without the other's record; with the `UserDefaultsStore`, four threads of 50 upserts kept 115 to
    /// 148 of the 200 records, in five runs.)
    @Test func aReadModifyWriteOfAStoreAtomicOnlyInTheProcessWaitsForTheOneUnderWay() {
        let store = ThreeMethodStore()
        let budget = BudgetConfig(store: store)
        let other = BudgetConfig(store: store)
        budget.expenses.upsert(Expense(id: 1, label: "rent"))
        let otherDone = DispatchSemaphore(value: 0)
        store.once(reading: "budget.BudgetConfig.expenses") {
            Thread.detachNewThread {
                other.expenses.upsert(Expense(id: 2, label: "food"))
                otherDone.signal()
            }
            // Serialised, the other upsert cannot finish before this one writes: this wait ends by its time limit.
            if otherDone.wait(timeout: .now() + 0.5) == .success { otherDone.signal() }
        }
        budget.expenses.upsert(Expense(id: 3, label: "fuel"))
        otherDone.wait()
        #expect(BudgetConfig(store: store).expenses.all.map(\.id) == [1, 2, 3])
        #expect(budget.expenses.all.map(\.id) == [1, 2, 3])
    }

    /// Apple's `UserDefaults` posts `didChangeNotification` inside `set`, on the writing thread: a handler there
    /// that changes another record of the collection being written goes ahead (its read-modify-write runs inside
    /// the one under way, which holds the storage's turn), and both records are kept.
    @Test func aDidChangeNotificationHandlerMayChangeARecordOfTheCollectionBeingWritten() throws {
        try NotifyingDefaults.withSuite { defaults in
            let budget = BudgetConfig(store: UserDefaultsStore(defaults))
            defaults.onFirstChange({ budget.expenses.upsert(Expense(id: 2, label: "food")) }) {
                #expect(finishes { budget.expenses.upsert(Expense(id: 1, label: "rent")) }, "the handler's upsert hung")
            }
            #expect(budget.expenses.all.map(\.id) == [1, 2])
            #expect(BudgetConfig(store: UserDefaultsStore(defaults)).expenses.all.map(\.id) == [1, 2])
        }
    }

    /// Configs over one `UserDefaults` suite created, changing records and released on eight threads at once, while
    /// a `didChangeNotification` handler (run inside each write, as Apple's) reads the collection: nothing hangs on
    /// the storage's turn, and every record is kept. (Threads, not tasks: the test suite's other tests may hold
    /// every thread of the cooperative pool for minutes, and tasks waiting for one are not a hang of this code.)
    @Test func recordChangesFromManyThreadsWithAHandlerThatReadsNeitherHangNorLoseRecords() throws {
        try NotifyingDefaults.withSuite { defaults in
            let store = UserDefaultsStore(defaults)
            let reader = BudgetConfig(store: store)
            let token = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: defaults, queue: nil
            ) { _ in _ = reader.expenses.count }
            defer { NotificationCenter.default.removeObserver(token) }
            let finished = finishes(within: 300) {
                let group = DispatchGroup()
                for thread in 0..<8 {
                    group.enter()
                    Thread.detachNewThread {
                        for index in 0..<4 {
                            let budget = BudgetConfig(store: store)
                            budget.expenses.upsert(Expense(id: thread * 1000 + index, label: "\(thread)"))
                        }
                        group.leave()
                    }
                }
                group.wait()
            }
            #expect(finished, "record changes on many threads hung")
            #expect(BudgetConfig(store: store).expenses.count == 32)
            #expect(reader.expenses.count == 32)
        }
    }
}
