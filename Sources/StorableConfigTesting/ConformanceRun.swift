import Dispatch
import Foundation
import StorableConfig

/// A config for the checks that go through the framework.
final class ConformanceConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "storable-config-conformance" }
    @Setting var count = 0
    @Setting var name = ""
}

/// A check that found the store wanting.
struct CheckFailure: Error {
    let message: String
}

/// One run of the checks over one store, collecting problems.
struct Run {
    let store: any ConfigStore
    let prefix: String
    var problems: [String] = []
    private var usedKeys: Set<String> = []

    init(store: any ConfigStore, prefix: String) {
        self.store = store
        self.prefix = prefix
    }

    mutating func check(_ name: String, _ body: (inout Run) throws -> Void) {
        do {
            try body(&self)
        } catch let failure as CheckFailure {
            problems.append("\(name): \(failure.message)")
        } catch {
            problems.append("\(name): the store threw \(error)")
        }
    }

    /// A key of this run's own.
    mutating func key(_ name: String) -> String {
        let key = prefix + name
        usedKeys.insert(key)
        return key
    }

    func expect(_ condition: Bool, _ message: @autoclosure () throws -> String) throws {
        if !condition { throw CheckFailure(message: try message()) }
    }

    /// Removes every key the run used.
    func cleanUp() {
        try? store.setValues([:], removingValuesForKeys: Array(usedKeys) + ConformanceConfig.keys)
    }

    // MARK: The checks

    static let everyKind: [String: StoredValue] = [
        "null": .null,
        "bool": .bool(true),
        "int-min": .int(.min),
        "int-max": .int(.max),
        "uint-max": .uint(.max),
        "double": .double(-1.5e-7),
        "double-whole": .double(2),
        "string": .string("ü \"quoted\" \\ \n \t 🎌"),
        "string-empty": .string(""),
        "data": .data(Data([0, 1, 127, 128, 255])),
        "date": .date(Date(timeIntervalSinceReferenceDate: 123_456_789.25)),
        "array": .array([.int(1), .string("two"), .bool(false), .array([])]),
        "array-empty": .array([]),
        "dictionary": .dictionary(["nested": .dictionary(["deep": .array([.double(0.5), .null])]), "": .int(0)]),
        "dictionary-empty": .dictionary([:]),
    ]

    mutating func everyKindReadsBack() throws {
        for (name, value) in Self.everyKind { try store.setValue(value, forKey: key(name)) }
        for (name, value) in Self.everyKind {
            let found = try store.value(forKey: key(name))
            try expect(
                Equivalence.holds(found, value), "\(name): wrote \(value), read \(found.map { "\($0)" } ?? "nothing")")
        }
    }

    mutating func readsItsWrites() throws {
        let key = key("read-your-writes")
        try expect(try store.value(forKey: key) == nil, "a key never written reads \(try store.value(forKey: key)!)")
        try store.setValue(.int(1), forKey: key)
        try store.setValue(.int(2), forKey: key)
        try expect(
            try store.value(forKey: key) == .int(2),
            "after writing 1 then 2, read \(String(describing: try store.value(forKey: key)))")
        try store.removeValue(forKey: key)
        try expect(
            try store.value(forKey: key) == nil,
            "after removeValue(forKey:), read \(String(describing: try store.value(forKey: key)))")
        try store.removeValue(forKey: key)  // removing what is not there is not an error
    }

    mutating func bulkReadsAgree() throws {
        let present = key("bulk-a")
        let absent = key("bulk-missing")
        try store.setValue(.string("a"), forKey: present)
        let values = try store.values(forKeys: [present, absent])
        try expect(values[present] == (try store.value(forKey: present)), "values(forKeys:) read \(values)")
        try expect(values[absent] == nil, "values(forKeys:) gave a value for a key that has none")
    }

    mutating func othersAreLeftAlone() throws {
        let foreign = key("foreign")
        let mine = key("mine")
        try store.setValue(.dictionary(["kept": .bool(true)]), forKey: foreign)
        try store.setValue(.int(1), forKey: mine)
        try store.setValue(.int(2), forKey: mine)
        try store.removeValue(forKey: mine)
        try expect(
            try store.value(forKey: foreign) == .dictionary(["kept": .bool(true)]),
            "a key that was not changed reads \(String(describing: try store.value(forKey: foreign)))")
    }

    mutating func bulkWritesApply() throws {
        let (first, second, gone) = (key("set-1"), key("set-2"), key("set-gone"))
        try store.setValue(.int(0), forKey: gone)
        try store.setValues([first: .int(1), second: .string("2")], removingValuesForKeys: [gone])
        let values = try store.values(forKeys: [first, second, gone])
        try expect(values == [first: .int(1), second: .string("2")], "after one setValues call, read \(values)")
    }

    mutating func updatesApply() throws {
        let (kept, changed, added, removed, other) = (
            key("update-kept"), key("update-changed"), key("update-added"), key("update-removed"), key("update-other")
        )
        try store.setValues([kept: .int(1), changed: .int(2), removed: .int(3)], removingValuesForKeys: [])
        var seen: [String: StoredValue] = [:]
        let result = try store.updateValues(forKeys: [kept, changed, added, removed]) { values in
            seen = values
            values[changed] = .int(20)
            values[added] = .int(40)
            values[removed] = nil
            values[other] = .int(99)  // not one of the keys: ignored
        }
        try expect(seen == [kept: .int(1), changed: .int(2), removed: .int(3)], "the transform was handed \(seen)")
        let expected: [String: StoredValue] = [kept: .int(1), changed: .int(20), added: .int(40)]
        try expect(result == expected, "updateValues returned \(result)")
        let stored = try store.values(forKeys: [kept, changed, added, removed, other])
        try expect(stored == expected, "after updateValues, the store holds \(stored)")
    }

    struct Refusal: Error {}

    mutating func failedUpdatesChangeNothing() throws {
        let (first, second) = (key("refused-1"), key("refused-2"))
        try store.setValue(.int(1), forKey: first)
        do {
            try store.updateValues(forKeys: [first, second]) { values in
                values[first] = .int(10)
                values[second] = .int(20)
                throw Refusal()
            }
            throw CheckFailure(message: "the transform's error did not reach the caller")
        } catch is Refusal {}
        let stored = try store.values(forKeys: [first, second])
        try expect(stored == [first: .int(1)], "after a transform that threw, the store holds \(stored)")
    }

    mutating func concurrentWritesLoseNothing() throws {
        let keys = (0..<64).map { key("thread-\($0)") }
        let store = store
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: keys.count) { index in
            do {
                try store.setValue(.int(Int64(index)), forKey: keys[index])
            } catch {
                failures.add("\(keys[index]): \(error)")
            }
        }
        try expect(failures.all.isEmpty, "writes threw: \(failures.all.prefix(3))")
        let values = try store.values(forKeys: keys)
        let lost = keys.indices.filter { values[keys[$0]] != .int(Int64($0)) }
        try expect(lost.isEmpty, "\(lost.count) of \(keys.count) writes from concurrent threads were lost")
    }

    mutating func concurrentUpdatesLoseNothing() throws {
        let counter = key("counter")
        let store = store
        let failures = Failures()
        let increments = 100
        DispatchQueue.concurrentPerform(iterations: increments) { _ in
            do {
                try store.updateValues(forKeys: [counter]) { values in
                    guard case .int(let count)? = values[counter] else {
                        values[counter] = .int(1)
                        return
                    }
                    values[counter] = .int(count + 1)
                }
            } catch {
                failures.add("\(error)")
            }
        }
        try expect(failures.all.isEmpty, "updates threw: \(failures.all.prefix(3))")
        let found = try store.value(forKey: counter)
        try expect(
            found == .int(Int64(increments)), "\(increments) concurrent increments left \(String(describing: found))")
    }

    mutating func laterStoreReads(_ later: any ConfigStore) throws {
        let key = key("persisted")
        try store.setValue(.string("kept"), forKey: key)
        try later.reload()
        try expect(
            try later.value(forKey: key) == .string("kept"),
            "a store made after the write read \(String(describing: try later.value(forKey: key)))")
    }

    func configWorks() throws {
        let keys = ConformanceConfig.keys
        try store.setValue(.int(5), forKey: keys[0])
        let config = ConformanceConfig(store: store)
        try expect(config.count == 5, "a config read \(config.count) where the store held 5")
        config.name = "assigned"
        try expect(
            try store.value(forKey: keys[1]) == .string("assigned"),
            "after an assignment the store holds \(String(describing: try store.value(forKey: keys[1])))")
        config.$name.reset()
        try expect(try store.value(forKey: keys[1]) == nil, "after reset() the store still holds a value")
    }

    func sharedStorageIsShared(_ other: any ConfigStore) throws {
        guard let first = store as? any IdentifiedConfigStore, let second = other as? any IdentifiedConfigStore else {
            throw CheckFailure(message: "makeStore returned a store that is not a IdentifiedConfigStore")
        }
        try expect(
            first.storageIdentity === second.storageIdentity,
            "two store objects for one storage report different storageIdentity objects")
        let a = ConformanceConfig(store: first)
        let b = ConformanceConfig(store: second)
        a.count = 41
        try expect(b.count == 41, "a config over the second store object read \(b.count) after the first assigned 41")
    }
}

extension ConformanceConfig {
    /// The keys of the config's two settings, in declaration order.
    static var keys: [String] {
        ["storable-config-conformance.ConformanceConfig.count", "storable-config-conformance.ConformanceConfig.name"]
    }
}

/// Problems collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = Lock()
    private var problems: [String] = []

    func add(_ problem: String) {
        lock.lock()
        problems.append(problem)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return problems
    }
}

/// The forms in which a store may give a value back (ConfigStore's documented conversions).
enum Equivalence {
    static func holds(_ found: StoredValue?, _ expected: StoredValue) -> Bool {
        guard let found else { return false }
        switch (found, expected) {
        case (.string(let text), .data(let bytes)): return Data(base64Encoded: text) == bytes
        case (.string(let text), .date(let date)): return dateFromText(text) == date
        case (.int(let number), .double(let double)): return Double(exactly: number) == double
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { holds($0, $1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && b.allSatisfy { holds(a[$0.key], $0.value) }
        default: return found == expected
        }
    }

    /// ISO 8601 text, with or without fractional seconds (the checks' dates need no more than milliseconds).
    static func dateFromText(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
