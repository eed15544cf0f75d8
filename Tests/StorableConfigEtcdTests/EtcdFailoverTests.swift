import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

/// A three-member cluster losing the member the watch is on, then the leader: the watcher sees every write,
/// in order, none missing. In the serialized suite of the other etcd tests, so that no two clusters run at once.
extension EtcdStoreTests {
    @Test(.needsEtcd) func aWatcherSeesEveryWriteInOrderWhileMembersDieAndComeBack() throws {
        let cluster = try EtcdCluster(size: 3)
        // The watched config's store starts with member 0, so its watch is on member 0.
        let watched = Counter(store: try EtcdStore(endpoints: cluster.endpoints, timeout: 3))
        let seen = Locked<[Int]>([])
        let token = watched.$count.observe { value in seen.withLock { $0.append(value) } }
        // The writer goes through the other members, in its own store (another identity, like another server).
        let writer = Counter(
            store: try EtcdStore(endpoints: Array(cluster.endpoints.dropFirst()) + [cluster.endpoints[0]], timeout: 3))
        var written = 0
        func write(_ count: Int) {
            for _ in 0..<count {
                written += 1
                writer.count = written
            }
        }
        write(10)
        cluster.stop(0)
        // Member 0 may have led: the writes below would then wait for an election, which on a loaded machine can
        // take longer than the writer's timeout, and a write that etcd did not take is reported, not seen.
        // The watch fails over on its own; what is tested is that it misses nothing that etcd took.
        try cluster.waitUntilHealthy()
        write(10)
        try cluster.start(0)
        try cluster.waitUntilHealthy()
        write(10)
        let leader = try #require(cluster.leaderIndex(), "no member says it leads")
        cluster.stop(leader)
        try cluster.waitUntilHealthy()
        write(10)
        try cluster.start(leader)
        try cluster.waitUntilHealthy()
        write(10)
        try waitFor(timeout: 30, failure: "seen: \(seen.withLock { $0 })") { seen.withLock { $0.last } == written }
        #expect(seen.withLock { $0 } == Array(1...written))
        token.cancel()
    }
}

extension EtcdStoreTests {
    /// A frozen member (SIGSTOP: a hung process, a paused VM) keeps the watch's connection open and sends nothing,
    /// for the 15 minutes of the idle limit. With the store's defaults, another member is asked what the newest
    /// change is, and the watch moves: a change committed by the other two members arrives within 10 s of the
    /// freeze (the wait allows twice that).
    @Test(.needsEtcd) func aChangeReachesTheStoreSoonAfterItsWatchedMemberFreezes() throws {
        let cluster = try EtcdCluster(size: 3)
        // The store starts with member 0, so its watch is on member 0.
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "frozen/")
        #expect(store.watchLagLimit == EtcdStore.defaultWatchLagLimit)
        let limits = Limits(store: store)
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        cluster.freeze(0)
        defer { cluster.thaw(0) }
        let frozen = Date()
        // Through member 1; if member 0 led, after the others have elected a leader.
        try cluster.put("frozen/etcd.Limits.maxUploadMB", "75", through: 1)
        let committed = Date().timeIntervalSince(frozen)
        try waitFor(timeout: 20) { limits.maxUploadMB == 75 }
        let seen = Date().timeIntervalSince(frozen)
        #expect(seen - committed < 10, "committed \(committed) s after the freeze, seen \(seen) s after it")
        #expect(store.storage.watchStatistics.watchesLeftBehind >= 1)
        // And the watch it moved to carries on.
        try cluster.put("frozen/etcd.Limits.maxUploadMB", "76", through: 2)
        try waitFor { limits.maxUploadMB == 76 }
    }
}

final class Counter: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting var count = 0
}
