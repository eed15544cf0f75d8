import Foundation
import StorableConfig
import StorableConfigTesting
import Testing

/// The conformance suite's checks of ``ConfigStoreHistory``, on a small store that keeps every revision in memory.
struct ConfigStoreHistoryConformanceTests {
    @Test func aStoreThatKeepsHistoryPassesTheHistoryChecks() throws {
        let store = RevisionedMemoryStore()
        try ConfigStoreConformance(persistent: false) { store }.run()
    }

    @Test func aConditionalWriteThatIgnoresTheRevisionFailsTheSuite() {
        let store = RevisionedMemoryStore(comparesRevisions: false)
        #expect {
            try ConfigStoreConformance(persistent: false) { store }.run()
        } throws: { error in
            "\(error)".contains("a conditional write at a revision the key is no longer at was made")
        }
    }
}

/// Every value of every key, each at the store's revision when it was written.
final class RevisionedMemoryStore: ConfigStoreHistory, @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`: by key, the values written, oldest first; `nil` for a removal.
    private var versions: [String: [(revision: Int64, value: StoredValue?)]] = [:]
    private var revision: Int64 = 1
    private let comparesRevisions: Bool

    init(comparesRevisions: Bool = true) {
        self.comparesRevisions = comparesRevisions
    }

    func value(forKey key: String) throws -> StoredValue? {
        lock.withLock { versions[key]?.last?.value }
    }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        lock.withLock { write(value, forKey: key) }
    }

    func removeValue(forKey key: String) throws {
        lock.withLock { write(nil, forKey: key) }
    }

    func history(forKey key: String, limit: Int) throws -> [StoredRevision] {
        let written = lock.withLock { versions[key] ?? [] }
        var entries: [StoredRevision] = []
        for version in written.reversed() {
            guard entries.count < limit, let value = version.value else { break }
            entries.append(StoredRevision(revision: version.revision, text: value.jsonText()))
        }
        return entries
    }

    func value(forKey key: String, atRevision revision: Int64) throws -> StoredRevision? {
        let version = lock.withLock { versions[key]?.last { $0.revision <= revision } }
        guard let version, let value = version.value else { return nil }
        return StoredRevision(revision: version.revision, text: value.jsonText())
    }

    func setValue(_ value: StoredValue, forKey key: String, ifModifiedAt revision: Int64) throws {
        let current = lock.withLock { () -> Int64? in
            let current = versions[key]?.last.flatMap { $0.value == nil ? nil : $0.revision }
            guard !comparesRevisions || (current ?? 0) == revision else { return current ?? -1 }
            write(value, forKey: key)
            return nil
        }
        if let current {
            throw StorableConfigError.changedSinceRevision(
                key: key, seen: revision, current: current < 0 ? nil : current)
        }
    }

    /// Called with the lock held.
    private func write(_ value: StoredValue?, forKey key: String) {
        revision += 1
        versions[key, default: []].append((revision, value))
    }
}
