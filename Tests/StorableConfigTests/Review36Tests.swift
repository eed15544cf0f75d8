import Foundation
import StorableConfigTesting
import Testing

@testable import StorableConfig

/// A config of one setting, for the review of the hub's lifetime and the lone writer's shortcut (#30).
final class R36Config: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r36" }
    @Setting var value = 0
}

/// Another class that reads the same key.
final class R36OtherConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r36" }
    override class var configName: String { "R36Config" }
    @Setting var value = 0
}

/// A superclass whose name its subclass inherits, and so its keys: the two classes read one key.
class R36BaseConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r36" }
    override class var configName: String { "R36Family" }
    @Setting var level = 0
}

final class R36SubConfig: R36BaseConfig, @unchecked Sendable {
    @Setting var extra = 0
}

/// A setting whose property name begins with an underscore (its wrapper's storage is `__hidden`).
final class R36UnderscoreConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r36" }
    @Setting var _hidden = 0
    @Setting var shown = 0
}

final class R36FailingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r36failing" }
    @Setting var token = ""
}

/// A store whose writes always fail, with a message naming the key.
final class R36RefusingStore: ConfigStore, @unchecked Sendable {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "the disk refused the write" }
    }

    func value(forKey key: String) -> StoredValue? { nil }
    func setValue(_ value: StoredValue, forKey key: String) throws { throw Refused() }
    func removeValue(forKey key: String) throws { throw Refused() }
}

/// A store over in-memory storage that names its storage the way a store that does not keep every storage it
/// ever saw would: one identity object per storage name, from a table that holds it weakly while it is in use
/// (as `JSONFile.open` shares one `JSONFile` per path). Two store objects for one name report the same identity
/// (the conformance kit's check holds), and nothing in the `IdentifiedConfigStore` documentation asks the store
/// to keep the identity alive itself.
final class R36WeakTableStore: IdentifiedConfigStore, @unchecked Sendable {
    final class Identity {}
    private struct WeakIdentity {
        weak var identity: Identity?
    }
    private static let table = Locked<[String: WeakIdentity]>([:])

    /// The storages, by name: kept for the process, as a database or a file is.
    private static let storages = Locked<[String: InMemoryStore]>([:])

    let name: String
    let storage: InMemoryStore

    init(name: String) {
        self.name = name
        storage = Self.storages.withLock { storages in
            if let storage = storages[name] { return storage }
            let storage = InMemoryStore()
            storages[name] = storage
            return storage
        }
    }

    var storageIdentity: AnyObject {
        Self.table.withLock { table in
            if let identity = table[name]?.identity { return identity }
            let identity = Identity()
            table[name] = WeakIdentity(identity: identity)
            return identity
        }
    }

    func value(forKey key: String) -> StoredValue? { storage.value(forKey: key) }
    func setValue(_ value: StoredValue, forKey key: String) { storage.setValue(value, forKey: key) }
    func removeValue(forKey key: String) { storage.removeValue(forKey: key) }
}

/// Review of the four commits of #30 (0de63e5, 2fdbcbc, d8ba7b9, c5cce02): each test states what a user would see.
@Suite(.serialized)
struct Review36Tests {
    // MARK: - Proven regressions

    /// 0de63e5: the hub now holds the storage's identity weakly and nothing else keeps it. A store that hands out
    /// its identity from a weak table (the identity lived because the hub held it) gets a new identity, and so a
    /// new hub, for every config: two configs over one store object no longer hear each other's writes, and
    /// `storageDidChange(forKeys:)` finds no hub to tell.
    @Test func configsOverAStoreWhoseIdentityATableHoldsWeaklyHearEachOthersWrites() {
        let store = R36WeakTableStore(name: "r36-\(UUID().uuidString)")
        let first = R36Config(store: store)
        let second = R36Config(store: store)
        first.value = 5
        #expect(second.value == 5, "a write through the first config reaches the second")
        second.value = 6
        #expect(first.value == 6, "a write through the second config reaches the first")
        let key = first.$value.key
        store.storage.setValue(.int(7), forKey: key)
        store.storageDidChange(forKeys: [key])
        #expect(first.value == 7, "a change the store reports reaches the configs")
        #expect(second.value == 7, "a change the store reports reaches the configs")
        withExtendedLifetime((first, second)) {}
    }

    /// 0de63e5: the same store, through the package's own conformance kit: it passed every check at 0be2611; now
    /// "configs over two store objects for one storage see each other's writes" fails, though the check before it,
    /// that both store objects report one `storageIdentity` object, holds.
    @Test func aStoreWhoseIdentityATableHoldsWeaklyPassesTheConformanceKit() throws {
        let name = "r36-\(UUID().uuidString)"
        try ConfigStoreConformance(persistent: true) { R36WeakTableStore(name: name) }.run()
    }

    /// 0de63e5: the record of failures already reported lasts as long as the storage, not as long as its
    /// configs, so the documented throttle ("once per key and cause until a write succeeds") holds whichever
    /// config writes: before, a config created after the others went reported the same failure again, and one
    /// created while another lived did not.
    @Test func aFailedWriteIsReportedOncePerKeyAndCauseWhicheverConfigWrites() {
        ReportedErrors.install()
        let store = R36RefusingStore()
        let marker = "r36-\(UUID().uuidString)"
        let key = "r36failing.R36FailingConfig.token"
        do {
            let first = R36FailingConfig(store: store)
            first.token = marker
        }
        let reportedFirst = ReportedErrors.mentioning(key).count
        #expect(reportedFirst > 0, "the first failed write is reported")
        let second = R36FailingConfig(store: store)
        second.token = marker
        #expect(ReportedErrors.mentioning(key).count == reportedFirst, "the same failure is not reported again")
        withExtendedLifetime(second) {}
    }

    /// 0de63e5, `dropHubsOfDeadStorages`: the hubs of storages that went are named by `ObjectIdentifier` between
    /// two lock sections, with no reference held; a hub freed by another thread in between, and a new hub made at
    /// its address for a live storage, is dropped as dead, and the next config over that storage gets a hub of its
    /// own. Threads create and release storages while configs created later on live storages must hear the keeper's
    /// writes.
    @Test func aLiveStorageKeepsOneHubWhileOtherStoragesComeAndGo() {
        let environment = ProcessInfo.processInfo.environment
        let threads = Int(environment["R36_THREADS"] ?? "") ?? 24
        let bursts = Int(environment["R36_BURSTS"] ?? "") ?? 60
        let rounds = Int(environment["R36_ROUNDS"] ?? "") ?? 40
        let ringSize = 24
        let failures = Locked<[String]>([])
        // Each burst ends with every thread's storages gone: the next burst's threads start by dropping their
        // hubs together, while each makes new hubs, where the freed ones were.
        for burst in 1...bursts {
            let group = DispatchGroup()
            for thread in 0..<threads {
                group.enter()
                Thread.detachNewThread {
                    var ring: [(store: InMemoryStore, keeper: R36Config)] = []
                    for round in 1...rounds {
                        if ring.count == ringSize { ring.removeFirst() }
                        let store = InMemoryStore()
                        ring.append((store, R36Config(store: store)))
                        for pick in 0..<2 {
                            let (store, keeper) = ring[(round &* 7 &+ pick &* 5 &+ thread) % ring.count]
                            let later = R36Config(store: store)
                            later.value = round
                            if keeper.value != round {
                                failures.withLock {
                                    $0.append("burst \(burst) thread \(thread) round \(round): \(keeper.value)")
                                }
                            }
                            withExtendedLifetime(later) {}
                        }
                    }
                    ring.removeAll()
                    group.leave()
                }
            }
            group.wait()
        }
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) writes not heard, first: \(found.prefix(3))")
    }

    // MARK: - Suspicions that held

    /// 2fdbcbc: a superclass and a subclass that inherits its `configName` read one key; each, alone of its class,
    /// hears the other's writes, whichever came first and after the other's configs went.
    @Test func heldASubclassAndItsSuperclassSharingAKeyHearEachOther() {
        let store = InMemoryStore()
        let sub = R36SubConfig(store: store)
        sub.level = 1
        sub.extra = 1
        let base = R36BaseConfig(store: store)
        #expect(base.level == 1)
        sub.level = 2
        #expect(base.level == 2)
        base.level = 3
        #expect(sub.level == 3)
        withExtendedLifetime(sub) {}
        let laterSub = R36SubConfig(store: store)
        base.level = 4
        #expect(laterSub.level == 4)
        laterSub.level = 5
        #expect(base.level == 5)
        withExtendedLifetime((base, laterSub)) {}
    }

    /// 2fdbcbc: two classes that share a key by `configName`, the second created inside the first's write (from
    /// an observer); then the first, alone of its class, writes again and the second hears it.
    @Test func heldAClassCreatedFromAnObserverOfTheLoneWriterHearsItsNextWrite() {
        let store = InMemoryStore()
        let first = R36Config(store: store)
        let created = Locked<R36OtherConfig?>(nil)
        let token = first.$value.observe { _ in
            if created.withLock({ $0 == nil }) {
                let other = R36OtherConfig(store: store)
                created.withLock { $0 = other }
            }
        }
        first.value = 1
        let other = created.withLock { $0 }
        #expect(other?.value == 1)
        first.value = 2
        #expect(other?.value == 2)
        withExtendedLifetime((first, token)) {}
    }

    /// d8ba7b9: a property whose name begins with an underscore (label `__hidden`) keeps its key and its class's
    /// one cached schema, instance after instance.
    @Test func heldAnUnderscoredPropertyKeepsItsKeyAndItsClassOneSchema() {
        let store = InMemoryStore()
        let first = R36UnderscoreConfig(store: store)
        let second = R36UnderscoreConfig(store: InMemoryStore())
        #expect(first.$_hidden.key == "r36.R36UnderscoreConfig._hidden")
        #expect(first.schema === second.schema)
        first._hidden = 3
        #expect(store.value(forKey: "r36.R36UnderscoreConfig._hidden") == .int(3))
        #expect(R36UnderscoreConfig(store: store)._hidden == 3)
    }
}
