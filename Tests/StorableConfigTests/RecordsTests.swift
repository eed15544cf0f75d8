import Foundation
import Testing

@testable import StorableConfig

struct Income: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var amount: Int
    var order: Int
}

struct Expense: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var label: String
}

final class BudgetConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "budget" }
    @Setting var currency = "JPY"
    @Records(orderedBy: \.order) var incomes: RecordCollection<Income>
    @Records var expenses: RecordCollection<Expense>
}

struct RecordsTests {
    func income(_ name: String, _ amount: Int, order: Int = 0, id: String? = nil) -> Income {
        Income(id: id ?? UUID().uuidString, name: name, amount: amount, order: order)
    }

    @Test(arguments: StoreKind.allCases)
    func upsertFetchDeleteAndCountPersist(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let salary = income("Salary", 300_000, order: 0, id: "salary")
        let bonus = income("Bonus", 50_000, order: 1, id: "bonus")
        do {
            let budget = BudgetConfig(store: fixture.open())
            #expect(budget.incomes.count == 0)
            budget.incomes.upsert(salary)
            budget.incomes.upsert(bonus)
            var raised = salary
            raised.amount = 320_000
            budget.incomes.upsert(raised)
            budget.expenses.upsert(contentsOf: [Expense(id: 2, label: "rent"), Expense(id: 1, label: "food")])
            #expect(budget.incomes.count == 2)
            #expect(budget.incomes["salary"]?.amount == 320_000)
            #expect(budget.expenses.all.map(\.id) == [1, 2])
        }
        let budget = BudgetConfig(store: fixture.open())
        #expect(budget.incomes.all.map(\.name) == ["Salary", "Bonus"])
        #expect(budget.incomes.record(id: "salary")?.amount == 320_000)
        #expect(budget.expenses[2]?.label == "rent")
        budget.incomes.delete(id: "salary")
        #expect(budget.incomes.count == 1)
        #expect(budget.incomes.all.first?.order == 0)
        budget.expenses.removeAll()
        #expect(BudgetConfig(store: fixture.open()).expenses.count == 0)
        #expect(BudgetConfig(store: fixture.open()).incomes.all.map(\.id) == ["bonus"])
    }

    @Test func orderedOperationsKeepTheOrderFieldDense() {
        let store = RecordingStore()
        let budget = BudgetConfig(store: store)
        for (index, name) in ["a", "b", "c", "d"].enumerated() {
            budget.incomes.insert(income(name, index, id: name), at: index)
        }
        #expect(budget.incomes.all.map(\.id) == ["a", "b", "c", "d"])
        let writesBefore = store.writes.withLock { $0.count }
        budget.incomes.move(id: "d", to: 0)
        #expect(store.writes.withLock { $0.count } == writesBefore + 1)
        #expect(budget.incomes.all.map(\.id) == ["d", "a", "b", "c"])
        #expect(budget.incomes.all.map(\.order) == [0, 1, 2, 3])
        budget.incomes.insert(income("x", 9, id: "x"), at: 2)
        #expect(budget.incomes.all.map(\.id) == ["d", "a", "x", "b", "c"])
        budget.incomes.delete(id: "a")
        #expect(budget.incomes.all.map(\.id) == ["d", "x", "b", "c"])
        #expect(budget.incomes.all.map(\.order) == [0, 1, 2, 3])
        #expect(store.writes.withLock { $0.count } == writesBefore + 3)
    }

    @Test(arguments: StoreKind.allCases)
    func orderedOperationsWorkOnEveryStoreAndAfterARelaunch(kind: StoreKind) {
        let fixture = StoreFixture(kind)
        do {
            let budget = BudgetConfig(store: fixture.open())
            for (index, name) in ["a", "b", "c"].enumerated() {
                budget.incomes.insert(income(name, 0, id: name), at: index)
            }
        }
        let budget = BudgetConfig(store: fixture.open())
        budget.incomes.move(id: "c", to: 0)
        budget.incomes.delete(id: "a")
        let relaunched = BudgetConfig(store: fixture.open())
        #expect(relaunched.incomes.all.map(\.id) == ["c", "b"])
        #expect(relaunched.incomes.all.map(\.order) == [0, 1])
        withExtendedLifetime(budget) {}
    }

    @Test func orderedOperationsDoNotUndoWhatAnotherProcessChanged() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let budget = BudgetConfig(store: try JSONFileStore(url: url))
        for (index, name) in ["a", "b", "c"].enumerated() {
            budget.incomes.insert(income(name, index, id: name), at: index)
        }
        // Another process deletes c and raises b, writing the file as a whole.
        var object = try jsonObject(at: url)
        var incomes = try #require(object["budget.BudgetConfig.incomes"] as? [String: Any])
        incomes["c"] = nil
        var b = try #require(incomes["b"] as? [String: Any])
        b["amount"] = 999
        incomes["b"] = b
        object["budget.BudgetConfig.incomes"] = incomes
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        budget.incomes.delete(id: "a")
        let stored = try #require(try jsonObject(at: url)["budget.BudgetConfig.incomes"] as? [String: Any])
        #expect(Set(stored.keys) == ["b"])
        #expect((stored["b"] as? [String: Any])?["amount"] as? Int == 999)
        #expect((stored["b"] as? [String: Any])?["order"] as? Int == 0)
        #expect(budget.incomes.all.map(\.amount) == [999])
    }

    @Test func aWriteThatFailedIsRetriedWithoutLosingWhatOthersWroteMeanwhile() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let budget = BudgetConfig(store: try JSONFileStore(url: url))
        budget.incomes.upsert(income("a", 1, id: "a"))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
        budget.incomes.upsert(income("b", 2, id: "b"))
        #expect(!ReportedErrors.mentioning(url.path).isEmpty)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        // Another process adds c meanwhile.
        var object = try jsonObject(at: url)
        var incomes = try #require(object["budget.BudgetConfig.incomes"] as? [String: Any])
        incomes["c"] = ["id": "c", "name": "c", "amount": 3, "order": 2]
        object["budget.BudgetConfig.incomes"] = incomes
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        budget.incomes.upsert(income("d", 4, id: "d"))
        let stored = try #require(try jsonObject(at: url)["budget.BudgetConfig.incomes"] as? [String: Any])
        #expect(Set(stored.keys) == ["a", "b", "c", "d"])
    }

    @Test func aNonDictionaryValueUnderTheKeyIsReportedAndLeftAlone() throws {
        ReportedErrors.install()
        let store = RecordingStore()
        store.inner.setValue(.string("not records"), forKey: "budget.BudgetConfig.expenses")
        let budget = BudgetConfig(store: store)
        budget.expenses.upsert(Expense(id: 1, label: "x"))
        #expect(store.value(forKey: "budget.BudgetConfig.expenses") == .string("not records"))
        #expect(store.writes.withLock { $0.isEmpty })
        #expect(
            ReportedErrors.mentioning("budget.BudgetConfig.expenses").contains {
                $0.description.contains("nothing was changed")
            })
    }

    @Test func anUpsertEncodesOnlyTheRecordsItChanges() {
        let store = RecordingStore()
        let budget = CountingBudget(store: store)
        budget.items.upsert(contentsOf: (0..<100).map { CountedRecord(id: "id\($0)", value: $0) })
        CountedRecord.encodings.withLock { $0 = 0 }
        budget.items.upsert(CountedRecord(id: "id50", value: -1))
        #expect(CountedRecord.encodings.withLock { $0 } == 1)
        guard case .dictionary(let entries)? = store.value(forKey: budget.items.key) else {
            Issue.record("not stored as a dictionary")
            return
        }
        #expect(entries.count == 100)
    }

    @Test func anUpsertChangesOnlyItsRecordInTheStore() {
        let store = RecordingStore()
        let budget = BudgetConfig(store: store)
        budget.incomes.upsert(contentsOf: (0..<100).map { income("n\($0)", $0, order: $0, id: "id\($0)") })
        let before = store.value(forKey: budget.incomes.key)
        budget.incomes.upsert(income("changed", 1, order: 50, id: "id50"))
        guard case .dictionary(let old)? = before, case .dictionary(let new)? = store.value(forKey: budget.incomes.key)
        else {
            Issue.record("not stored as a dictionary")
            return
        }
        #expect(new.count == 100)
        #expect(new.filter { old[$0.key] != $0.value }.map(\.key) == ["id50"])
    }

    @Test func newIDsAreUniqueAndNeverReused() {
        let budget = BudgetConfig(store: InMemoryStore())
        var seen: Set<String> = []
        for _ in 0..<1000 {
            let id = budget.incomes.newID()
            #expect(!seen.contains(id))
            seen.insert(id)
            budget.incomes.upsert(income("x", 1, id: id))
            budget.incomes.delete(id: id)
        }
    }

    @Test func aRecordThatNoLongerDecodesIsKeptSkippedAndReported() throws {
        ReportedErrors.install()
        let store = InMemoryStore([
            "budget.BudgetConfig.incomes": .dictionary([
                "old": .dictionary(["id": .string("old"), "title": .string("schema of last year")]),
                "ok": .dictionary([
                    "id": .string("ok"), "name": .string("Salary"), "amount": .int(1), "order": .int(0),
                ]),
            ])
        ])
        let budget = BudgetConfig(store: store)
        #expect(budget.incomes.all.map(\.id) == ["ok"])
        #expect(!ReportedErrors.mentioning("budget.BudgetConfig.incomes[old]").isEmpty)
        budget.incomes.upsert(income("New", 2, order: 1, id: "new"))
        budget.incomes.removeAll()
        guard case .dictionary(let entries)? = store.value(forKey: "budget.BudgetConfig.incomes") else {
            Issue.record("the undecodable record was dropped")
            return
        }
        #expect(Array(entries.keys) == ["old"])
    }

    @Test(.timeLimit(.minutes(5)))
    func anotherInstanceSeesChangesAndTheConfigStreamReportsThem() async {
        let store = InMemoryStore()
        let writer = BudgetConfig(store: store)
        let reader = BudgetConfig(store: store)
        var changes = reader.changes.makeAsyncIterator()
        writer.incomes.upsert(income("Salary", 1, id: "s"))
        #expect(reader.incomes["s"]?.name == "Salary")
        let change = await changes.next()
        #expect(change?.name == "incomes")
        #expect((change?.newValue as? [Income])?.map(\.id) == ["s"])
    }

    @Test func theFileShowsRecordsAsReadableJSON() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let budget = BudgetConfig(store: try JSONFileStore(url: url))
        budget.incomes.upsert(income("Salary", 300_000, id: "salary"))
        let object = try jsonObject(at: url)
        let incomes = try #require(object["budget.BudgetConfig.incomes"] as? [String: Any])
        #expect((incomes["salary"] as? [String: Any])?["name"] as? String == "Salary")
    }

    @Test func twoProcessesUpsertingDifferentRecordsOfOneCollectionLoseNone() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let children = try (0..<2).map { index in
            try launchProduct("storable-config-stress", ["upsert-records", url.path, "p\(index)", "60"])
        }
        for child in children {
            child.waitUntilExit()
            #expect(child.terminationStatus == 0)
        }
        let object = try jsonObject(at: url)
        let records = try #require(object["stress.RecordsConfig.items"] as? [String: Any])
        #expect(records.count == 120)
    }
}

/// A record that counts how often it is encoded.
struct CountedRecord: Codable, Identifiable, Sendable {
    static let encodings = Locked(0)
    var id: String
    var value: Int

    init(id: String, value: Int) {
        self.id = id
        self.value = value
    }

    func encode(to encoder: any Encoder) throws {
        Self.encodings.withLock { $0 += 1 }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(value, forKey: .value)
    }
}

final class CountingBudget: StorableConfig {
    override class var namespace: String { "counting" }
    @Records var items: RecordCollection<CountedRecord>
}

/// A record whose decoding reads the collection it is decoded into, as a user's `init(from:)` may: if the
/// collection decoded under its lock, this would deadlock.
struct ReentrantRecord: Codable, Identifiable, Sendable {
    static let collection = Locked<RecordCollection<ReentrantRecord>?>(nil)
    var id: String
    var seenCount = -1

    init(id: String) {
        self.id = id
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        seenCount = Self.collection.withLock { $0 }?.count ?? -1
    }
}

final class ReentrantConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "test" }
    @Records var items: RecordCollection<ReentrantRecord>
}

struct RecordsLockTests {
    @Test func aRecordsDecoderMayReadItsOwnCollection() throws {
        let store = InMemoryStore()
        let writer = ReentrantConfig(store: store)
        ReentrantRecord.collection.withLock { $0 = writer.items }
        defer { ReentrantRecord.collection.withLock { $0 = nil } }
        writer.items.upsert(ReentrantRecord(id: "a"))
        // Another config on the store decodes the record it is told of, calling back into its collection.
        let reader = ReentrantConfig(store: store)
        ReentrantRecord.collection.withLock { $0 = reader.items }
        writer.items.upsert(ReentrantRecord(id: "b"))
        #expect(reader.items.count == 2)
        #expect(reader.items["b"]?.seenCount == 1)
    }
}

/// Two versions of a record type on one store, as Records.md describes them.
struct RecordVersionTests {
    @Test func anOlderTypeKeepsTheFieldsItDoesNotKnowWhenItWritesARecord() {
        let store = InMemoryStore()
        let newer = VersionedRecordsRequired(store: store)
        newer.items.upsert(PartV2Required(id: "a", size: 1, colour: "red"))
        let older = VersionedRecordsV1(store: store)
        older.items.upsert(PartV1(id: "a", size: 2))
        // The older type wrote what it knows and kept the field it does not know (in earlier releases the field
        // was gone, and the record no longer decoded as the newer type).
        let required = VersionedRecordsRequired(store: store).items.record(id: "a")
        #expect(required?.size == 2)
        #expect(required?.colour == "red")
        let tolerant = VersionedRecordsOptional(store: store).items.record(id: "a")
        #expect(tolerant?.size == 2)
        #expect(tolerant?.colour == "red")
    }
}

struct PartV1: Codable, Identifiable, Sendable {
    var id: String
    var size: Int
}

struct PartV2Required: Codable, Identifiable, Sendable {
    var id: String
    var size: Int
    var colour: String
}

struct PartV2Optional: Codable, Identifiable, Sendable {
    var id: String
    var size: Int
    var colour: String?
}

final class VersionedRecordsV1: StorableConfig {
    override class var configName: String { "VersionedRecords" }
    @Records var items: RecordCollection<PartV1>
}

final class VersionedRecordsRequired: StorableConfig {
    override class var configName: String { "VersionedRecords" }
    @Records var items: RecordCollection<PartV2Required>
}

final class VersionedRecordsOptional: StorableConfig {
    override class var configName: String { "VersionedRecords" }
    @Records var items: RecordCollection<PartV2Optional>
}
