import Dispatch
import Foundation
import StorableConfig
import StorableConfigSecrets

/// Checks a ``StorableConfig/SecretStore`` against the guarantees that the protocol documents, in one call.
///
/// Run it from a test of your store, with any test framework; it throws one error that lists every check
/// that failed:
///
/// ```swift
/// @Test func myVaultConforms() throws {
///     try SecretStoreConformance(makeStore: { try MyVaultStore(name: "tests") }).run()
/// }
/// ```
///
/// The checks use keys under a prefix of their own (`storable-config-conformance.<UUID>.`) and remove them at
/// the end. They write bytes of every kind (empty, a megabyte, every byte value, text in odd Unicode), replace
/// and remove them, add from many threads at once (exactly one add must win), write keys with `/`, `..`, odd
/// Unicode and of a thousand characters (each must stay apart from the others), and check that no error and no
/// description of the store shows a secret's bytes.
public struct SecretStoreConformance: Sendable {
    private let makeStore: @Sendable () throws -> any SecretStore
    private let persistent: Bool

    /// Creates a check of the stores that `makeStore` returns.
    ///
    /// - Parameters:
    ///   - persistent: Whether a secret written through one store object is read by a store object made later
    ///     (`false` for a store that keeps secrets in the object itself).
    ///   - makeStore: Returns a store over the same storage each time it is called.
    public init(persistent: Bool = true, makeStore: @escaping @Sendable () throws -> any SecretStore) {
        self.makeStore = makeStore
        self.persistent = persistent
    }

    /// Runs every check.
    /// - Throws: ``ConfigStoreConformance/Failure`` listing every check that failed, or what `makeStore` throws.
    public func run() throws {
        let store = try makeStore()
        var run = SecretRun(store: store, prefix: "storable-config-conformance.\(UUID().uuidString).")
        run.check("bytes of every kind read back") { try $0.everyKindReadsBack() }
        run.check("a secret is replaced, removed, and removing an absent one is not an error") {
            try $0.replacesAndRemoves()
        }
        run.check("addSecret adds only to a key without a secret") { try $0.addsOnlyWhenAbsent() }
        run.check("of many threads adding to one key, exactly one wins") { try $0.concurrentAddsHaveOneWinner() }
        run.check("keys with odd characters, and long keys, stay apart") { try $0.oddKeysStayApart() }
        run.check("writes from many threads lose nothing") { try $0.concurrentWritesLoseNothing() }
        if persistent {
            run.check("a store made later reads what was written") { try $0.laterStoreReads(try makeStore()) }
        }
        run.check("the store's description shows no secret") { try $0.descriptionHidesSecrets() }
        run.cleanUp()
        if !run.problems.isEmpty { throw ConfigStoreConformance.Failure(problems: run.problems) }
    }
}
