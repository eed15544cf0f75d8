import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// History and rollback against a real etcd: `$setting.history(limit:)` and `$setting.rollBack(to:)`.
extension EtcdStoreTests {
    @Test(.needsEtcd) func theHistoryListsEarlierValuesNewestFirstWithTheirRevisions() async throws {
        let cluster = try EtcdCluster()
        let key = "history/etcd.Limits.maxUploadMB"
        let first = try cluster.put(key, "60")
        try cluster.put("history/unrelated", "1")
        let second = try cluster.put(key, "70")
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "history/"))
        limits.maxUploadMB = 80
        let history = try await limits.$maxUploadMB.history(limit: 10)
        #expect(history.map(\.value) == [80, 70, 60])
        #expect(history.map(\.text) == ["80", "70", "60"])
        #expect(history[1].revision == second && history[2].revision == first)
        #expect(history[0].revision > second)
        #expect(history.allSatisfy { $0.latestRevision == history[0].revision })
        // The limit counts entries, the current one included.
        #expect(try await limits.$maxUploadMB.history(limit: 2).map(\.value) == [80, 70])
        // A key that was removed and set again has history back to its creation only.
        try cluster.delete(key)
        try cluster.put(key, "90")
        try waitFor { limits.maxUploadMB == 90 }
        #expect(try await limits.$maxUploadMB.history(limit: 10).map(\.value) == [90])
        // Revision 1 is the new cluster's, before any key.
        await #expect(throws: StorableConfigError.noValueAtRevision(key: "etcd.Limits.maxUploadMB", revision: 1)) {
            try await limits.$maxUploadMB.rollBack(to: 1)
        }
        #expect(limits.maxUploadMB == 90)
    }

    @Test(.needsEtcd) func aHistoryValueThatNoLongerDecodesIsListedAsItsText() async throws {
        let cluster = try EtcdCluster()
        let key = "undecodable/etcd.Limits.maxUploadMB"
        EtcdReports.install()
        try cluster.put(key, "plain")
        try cluster.put(key, #""sixty""#)
        try cluster.put(key, "60")
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "undecodable/"))
        let history = try await limits.$maxUploadMB.history(limit: 10)
        #expect(history.map(\.value) == [60, nil, nil])
        #expect(history.map(\.text) == ["60", #""sixty""#, "plain"])
        // Type-erased, as the demo reads it: the values as text, nil where they are not of the type.
        let texts = try await limits.$maxUploadMB.historyTexts(limit: 10)
        #expect(texts.map(\.value) == ["60", nil, nil])
    }

    @Test(.needsEtcd) func theHistoryStopsWhereTheClusterCompactedIt() async throws {
        let cluster = try EtcdCluster()
        let key = "compacted/etcd.Limits.maxUploadMB"
        try cluster.put(key, "60")
        let second = try cluster.put(key, "70")
        let third = try cluster.put(key, "80")
        try cluster.compact(upTo: second)
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "compacted/"))
        let history = try await limits.$maxUploadMB.history(limit: 10)
        #expect(history.map(\.revision) == [third, second])
        #expect(history.map(\.value) == [80, 70])
        try cluster.compact(upTo: third)
        #expect(try await limits.$maxUploadMB.history(limit: 10).map(\.revision) == [third])
    }

    @Test(.needsEtcd) func aRollbackRestoresTheValueAndTheConfigsAndObserversHearIt() async throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "rollback/")
        let limits = Limits(store: store)
        let sameProcess = Limits(store: store)
        let otherServer = Limits(
            store: try EtcdStore(endpoints: cluster.endpoints.map(Self.localhost), prefix: "rollback/"))
        limits.maxUploadMB = 60
        limits.maxUploadMB = 70
        limits.maxUploadMB = 80
        let seen = Locked<[Int]>([])
        let token = limits.$maxUploadMB.observe { value in seen.withLock { $0.append(value) } }
        let history = try await limits.$maxUploadMB.history(limit: 3)
        #expect(history.map(\.value) == [80, 70, 60])
        try await limits.$maxUploadMB.rollBack(to: history[2])
        // Before rollBack returns: the config, and another config on the same store.
        #expect(limits.maxUploadMB == 60)
        #expect(sameProcess.maxUploadMB == 60)
        #expect(try cluster.get("rollback/etcd.Limits.maxUploadMB") == "60")
        try waitFor { seen.withLock { $0 }.contains(60) }
        try waitFor { otherServer.maxUploadMB == 60 }
        // The rollback is a change of its own, on top of the history.
        let after = try await limits.$maxUploadMB.history(limit: 10)
        #expect(after.map(\.value) == [60, 80, 70, 60])
        #expect(after[0].revision > history[0].revision)
        // By revision alone: the key's revision now is the one compared.
        try await limits.$maxUploadMB.rollBack(to: history[1].revision)
        #expect(limits.maxUploadMB == 70)
        token.cancel()
    }

    @Test(.needsEtcd) func aRollbackIsRefusedWhenTheKeyChangedAfterTheCallerLooked() async throws {
        let cluster = try EtcdCluster()
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "raced/"))
        limits.maxUploadMB = 60
        limits.maxUploadMB = 70
        let history = try await limits.$maxUploadMB.history(limit: 10)
        let meanwhile = try cluster.put("raced/etcd.Limits.maxUploadMB", "99")
        await #expect(
            throws: StorableConfigError.changedSinceRevision(
                key: "etcd.Limits.maxUploadMB", seen: history[0].revision, current: meanwhile)
        ) {
            try await limits.$maxUploadMB.rollBack(to: history[1])
        }
        #expect(try cluster.get("raced/etcd.Limits.maxUploadMB") == "99")
        try waitFor { limits.maxUploadMB == 99 }
        let message = StorableConfigError.changedSinceRevision(
            key: "etcd.Limits.maxUploadMB", seen: history[0].revision, current: meanwhile
        ).description
        #expect(message.contains("is at revision \(meanwhile) now"))
    }

    @Test(.needsEtcd) func aRollbackToACompactedRevisionIsRefused() async throws {
        let cluster = try EtcdCluster()
        let key = "gone/etcd.Limits.maxUploadMB"
        let first = try cluster.put(key, "60")
        let second = try cluster.put(key, "70")
        try cluster.compact(upTo: second)
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "gone/"))
        await #expect(throws: StorableConfigError.revisionCompacted(key: "etcd.Limits.maxUploadMB", revision: first)) {
            try await limits.$maxUploadMB.rollBack(to: first)
        }
        #expect(try cluster.get(key) == "70")
        #expect(limits.maxUploadMB == 70)
    }

    @Test(.needsEtcd) func aRollbackToAValueOutsideTheRangeIsRefusedByValidation() async throws {
        let cluster = try EtcdCluster()
        let key = "ranged/etcd.RangedLimits.percent"
        EtcdReports.install()
        let outside = try cluster.put(key, "500")
        try cluster.put(key, "20")
        let limits = RangedLimits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "ranged/"))
        #expect(limits.percent == 20)
        await #expect {
            try await limits.$percent.rollBack(to: outside)
        } throws: { error in
            guard case .invalidValue(let errorKey, let value, _) = error as? StorableConfigError else { return false }
            return errorKey == "etcd.RangedLimits.percent" && value == "500"
        }
        #expect(try cluster.get(key) == "20")
        #expect(limits.percent == 20)
    }

    @Test func storesWithoutHistorySayTheyKeepNone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try JSONFileStore(url: directory.appendingPathComponent("settings.json"))
        let suite = "StorableConfigEtcdTests-history-\(UUID().uuidString)"
        // Nothing is written to it, so no property list is made.
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let defaults = try #require(UserDefaultsStore(suiteName: suite))
        for store in [InMemoryStore(), file, defaults] as [any ConfigStore] {
            let limits = Limits(store: store)
            await #expect {
                _ = try await limits.$maxUploadMB.history(limit: 5)
            } throws: { error in
                guard case .historyNotKept(let name) = error as? StorableConfigError else { return false }
                return name.contains(String(describing: type(of: store)))
                    && "\(error)".contains("keeps no history")
            }
            await #expect(throws: StorableConfigError.self) {
                try await limits.$maxUploadMB.rollBack(to: 1)
            }
        }
    }
}

final class RangedLimits: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting(in: 1...100) var percent = 50
}
