import Foundation
import Testing

@testable import StorableConfig

/// The demo's `budget.incomes` records: one shape everywhere, a stored value of the wrong shape kept, ids unique.
struct DemoRecordsTests {
    static let incomesKey = "storable-config-demo.BudgetConfig.incomes"
    static let salary = #"{"id":"s","name":"Salary","amount":300000,"order":0}"#

    @Test func setOverAStoredValueOfTheWrongShapeFailsAndKeepsIt() throws {
        let home = DemoHome()
        try FileManager.default.createDirectory(
            at: home.settingsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        let stored = Data(#"{"\#(Self.incomesKey)": [1, 2, 3]}"#.utf8)
        try stored.write(to: home.settingsFile)
        let result = try home.run("set", "budget.incomes", "[\(Self.salary)]")
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(
            result.errorOutput.contains(
                "cannot set budget.incomes: the value stored for it, [1,2,3], is not a dictionary of records by id; "
                    + "it is kept, and nothing was changed (storable-config-demo reset budget.incomes removes it)"),
            "\(result.errorOutput)")
        #expect(try Data(contentsOf: home.settingsFile) == stored)
        // The way out that the message names.
        #expect(try home.run("reset", "budget.incomes").status == 0)
        #expect(try home.run("set", "budget.incomes", "[\(Self.salary)]").status == 0)
        #expect(try home.run("get", "budget.incomes").output.contains("Salary"))
    }

    @Test func listJSONShowsRecordsAsTheArrayThatGetListAndSetShow() throws {
        let home = DemoHome()
        let bonus = #"{"id":"b","name":"Bonus","amount":50000,"order":1}"#
        let set = try home.run("set", "budget.incomes", "[\(Self.salary),\(bonus)]")
        #expect(set.status == 0)
        let get = try home.run("get", "budget.incomes").output
        #expect(set.output == "budget.incomes = \(get)")
        let list = try home.run("list", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [String: Any])
        let incomes = try #require(object["budget.incomes"] as? [[String: Any]])
        #expect(incomes.map { $0["id"] as? String } == ["s", "b"])
        let fromGet = try #require(try JSONSerialization.jsonObject(with: Data(get.utf8)) as? [[String: Any]])
        #expect(fromGet.map { $0["name"] as? String } == incomes.map { $0["name"] as? String })
        // An empty collection is an empty array too.
        let empty = try DemoHome().run("list", "--json").output
        let emptyObject = try #require(try JSONSerialization.jsonObject(with: Data(empty.utf8)) as? [String: Any])
        #expect((emptyObject["budget.incomes"] as? [Any])?.isEmpty == true)
    }

    @Test func twoRecordsWithOneIdAreRefusedNamingTheId() throws {
        let home = DemoHome()
        try home.run("set", "budget.incomes", "[\(Self.salary)]")
        let before = try Data(contentsOf: home.settingsFile)
        let twice = #"[{"id":"x","name":"A","amount":1,"order":0},{"id":"x","name":"B","amount":2,"order":1}]"#
        let result = try home.run("set", "budget.incomes", twice)
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput.contains("the id 'x' is given to more than one record"), "\(result.errorOutput)")
        #expect(try Data(contentsOf: home.settingsFile) == before)
    }

    @Test func assigningRecordsReplacesThemInOneWriteAndThrowsOverAValueOfTheWrongShape() throws {
        let store = InMemoryStore()
        let budget = BudgetConfig(store: store)
        budget.incomes.upsert(Income(id: "old", name: "Old", amount: 1, order: 0))
        let writes = Locked(0)
        let token = budget.observe { _ in writes.withLock { $0 += 1 } }
        try budget.incomes.assign(parsing: #"[{"id":"new","name":"New","amount":2,"order":0}]"#)
        #expect(budget.incomes.all.map(\.id) == ["new"])
        #expect(writes.withLock { $0 } == 1)
        withExtendedLifetime(token) {}
        store.setValue(.array([.int(1)]), forKey: budget.incomes.key)
        #expect(throws: StorableConfigError.self) { try budget.incomes.assign(parsing: "[]") }
        #expect(store.value(forKey: budget.incomes.key) == .array([.int(1)]))
    }
}
