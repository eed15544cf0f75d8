import Dispatch
import Foundation
import StorableConfig

/// Checks a ``StorableConfig/ConfigStore`` against the guarantees that the protocol documents, in one call.
///
/// Run it from a test of your store, with any test framework; it throws one error that lists every check
/// that failed:
///
/// ```swift
/// import StorableConfigTesting
/// import Testing
///
/// @Test func myStoreConforms() throws {
///     let url = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
///     try ConfigStoreConformance(makeStore: { try MyStore(url: url) }).run()
/// }
/// ```
///
/// The checks use keys under a prefix of their own (`storable-config-conformance.<UUID>.`) and remove
/// them at the end, so a store with other data in it can be checked. Checks of guarantees that a store
/// documents as its own follow what it declares: concurrent read-modify-writes are checked when its
/// ``StorableConfig/ConfigStore/updateAtomicity`` is
/// ``StorableConfig/ConfigStoreAtomicity/acrossProcesses``, persistence when `persistent` is set, history and
/// conditional writes when it adopts ``StorableConfig/ConfigStoreHistory``.
public struct ConfigStoreConformance: Sendable {
    /// Every check that failed, each a sentence naming the check, what was expected and what was found.
    public struct Failure: Error, CustomStringConvertible {
        /// One line per failed check.
        public let problems: [String]

        /// The failed checks, one per line.
        public var description: String {
            "The store failed \(problems.count) conformance check(s):\n"
                + problems.map { "- " + $0 }.joined(separator: "\n")
        }
    }

    private let makeStore: @Sendable () throws -> any ConfigStore
    private let persistent: Bool

    /// Creates a check of the stores that `makeStore` returns.
    ///
    /// - Parameters:
    ///   - makeStore: Returns a store over the same storage each time it is called: a new store object for the
    ///     same file or database, or the same object for a store whose storage lives in it (an in-memory
    ///     store).
    ///   - persistent: Whether a value written through one store object is read by a store object made later
    ///     (`false` for a store that keeps values in the object itself).
    public init(persistent: Bool = true, makeStore: @escaping @Sendable () throws -> any ConfigStore) {
        self.makeStore = makeStore
        self.persistent = persistent
    }

    /// Runs every check.
    /// - Throws: ``Failure`` listing every check that failed, or what `makeStore` throws.
    public func run() throws {
        let store = try makeStore()
        var run = Run(store: store, prefix: "storable-config-conformance.\(UUID().uuidString).")
        run.check("every kind of value reads back") { try $0.everyKindReadsBack() }
        run.check("read your writes") { try $0.readsItsWrites() }
        run.check("values(forKeys:) agrees with value(forKey:)") { try $0.bulkReadsAgree() }
        run.check("a change to one key leaves the others alone") { try $0.othersAreLeftAlone() }
        run.check("setValues(_:removingValuesForKeys:) applies every change") { try $0.bulkWritesApply() }
        run.check("updateValues(forKeys:_:) reads, changes and returns") { try $0.updatesApply() }
        run.check("a transform that throws changes nothing") { try $0.failedUpdatesChangeNothing() }
        run.check("writes from many threads lose nothing") { try $0.concurrentWritesLoseNothing() }
        if store.updateAtomicity == .acrossProcesses {
            run.check("concurrent updateValues(forKeys:_:) lose no update") { try $0.concurrentUpdatesLoseNothing() }
        }
        if persistent {
            run.check("a store made later reads what was written") { try $0.laterStoreReads(try makeStore()) }
        }
        run.check("a config bound to the store reads and writes through it") { try $0.configWorks() }
        if store is any IdentifiedConfigStore {
            run.check("configs over two store objects for one storage see each other's writes") {
                try $0.sharedStorageIsShared(try makeStore())
            }
        }
        if let history = store as? any ConfigStoreHistory {
            run.check("history lists values newest first, and a conditional write compares the revision") {
                try $0.historyAndConditionalWritesHold(history)
            }
        }
        run.cleanUp()
        if !run.problems.isEmpty { throw Failure(problems: run.problems) }
    }
}
