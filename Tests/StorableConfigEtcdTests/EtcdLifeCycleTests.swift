import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// A config whose initializer suspends before `super.init`, over an EtcdStore.
final class SuspendingEtcdConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd-lifecycle" }
    @Setting var level = 0
    @Setting var title = ""

    init(suspendingOver store: any ConfigStore) async {
        await Task.yield()
        super.init(store: store)
    }

    required init(store: any ConfigStore) {
        super.init(store: store)
    }
}

/// Configs created, observed and released on several threads and tasks at once over one EtcdStore, whose watch
/// delivers changes on a thread of its own meanwhile. A hang fails the test after its time limit.
@Suite(.serialized)
struct EtcdLifeCycleTests {
    @Test(.needsEtcd) func configsCreatedObservedAndReleasedOnManyThreadsNeitherHangNorMixUp() async throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "lifecycle/")
        // Fewer under ThreadSanitizer, where 40 rounds took 430 s of a CI run (146 s without): the same
        // interleavings, each slower, and still 192 configs on twelve threads and tasks.
        let rounds = EtcdCluster.isRunningUnderThreadSanitizer ? 16 : 40
        let problems = Locked<[String]>([])
        // Counted, not waited for with a semaphore: blocking one of the few threads that run tasks could starve
        // the task group below when other suites run at the same time.
        let finished = Locked(0)
        // Rounds done by all, so that the wait below tells a hang (no round for two minutes) from a slow run: with
        // the whole suite on two cores, the tasks below can wait minutes for a thread of the shared pool.
        let progress = Locked(0)
        for worker in 0..<4 {
            Thread {
                for round in 0..<rounds {
                    _ = Limits(store: store).maxUploadMB
                    let config = Limits(store: store)
                    let token = config.$maxUploadMB.observe { _ in }
                    if round % 4 == worker { config.maxUploadMB = round }
                    if round % 2 == 0 { token.cancel() }
                    progress.withLock { $0 += 1 }
                }
                finished.withLock { $0 += 1 }
            }.start()
        }
        Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        for _ in 0..<rounds {
                            let config = await SuspendingEtcdConfig(suspendingOver: store)
                            if config.$level.key != "etcd-lifecycle.SuspendingEtcdConfig.level" {
                                problems.withLock { $0.append(config.$level.key) }
                            }
                            progress.withLock { $0 += 1 }
                        }
                    }
                }
            }
            finished.withLock { $0 += 1 }
        }
        var lastRounds = 0
        var lastProgress = Date()
        while finished.withLock({ $0 }) < 5, Date().timeIntervalSince(lastProgress) < 120 {
            try await Task.sleep(for: .milliseconds(50))
            let rounds = progress.withLock { $0 }
            if rounds != lastRounds { (lastRounds, lastProgress) = (rounds, Date()) }
        }
        #expect(
            finished.withLock { $0 } == 5,
            "configs over an EtcdStore hung (no round done for 120 s, after \(lastRounds) of \(4 * rounds + 8 * rounds))"
        )
        #expect(problems.withLock { $0 }.isEmpty)
        withExtendedLifetime(cluster) {}
    }
}
