import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

/// The watch over time: a compaction behind it, quiet hours, an idle member, a store nobody uses any more. In
/// the serialized suite of the other etcd tests, so that no two clusters run at once.
extension EtcdStoreTests {
    @Test(.needsEtcd) func aCompactionBehindTheWatchLeadsToAFreshReadAndTheDifferencesAreDelivered() throws {
        let cluster = try EtcdCluster()
        let original = cluster.members[0].clientPort
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "compaction/", timeout: 2)
        let limits = Limits(store: store)
        limits.maxUploadMB = 60
        limits.hosts = ["a"]
        let seenSizes = Locked<[Int]>([])
        let seenHosts = Locked<[[String]]>([])
        let sizes = limits.$maxUploadMB.observe { value in seenSizes.withLock { $0.append(value) } }
        let hosts = limits.$hosts.observe { value in seenHosts.withLock { $0.append(value) } }
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }

        // The member goes away, and comes back serving other clients on another port, where the store cannot
        // see it: the settings change there, and the history of those changes is compacted away.
        cluster.stop(0)
        try cluster.start(0, clientPort: EtcdCluster.freePort())
        try cluster.waitUntilHealthy()
        try cluster.put("compaction/etcd.Limits.maxUploadMB", "70")
        try cluster.delete("compaction/etcd.Limits.hosts")
        let last = try cluster.put("compaction/etcd.Limits.maxUploadMB", "80")
        try cluster.compact(upTo: last)
        // Back on the port the store knows: the watch resumes at a revision that no longer exists.
        cluster.stop(0)
        try cluster.start(0, clientPort: original)
        try cluster.waitUntilHealthy()

        try waitFor { limits.maxUploadMB == 80 && limits.hosts == [] }
        #expect(store.storage.watchStatistics.resynchronisations == 1)
        // The differences, delivered as changes: the value it has now, and the deleted key's default.
        try waitFor { seenSizes.withLock { $0.last } == 80 && seenHosts.withLock { $0.last } == [] }
        // And the watch opened after the fresh read carries on.
        try cluster.put("compaction/etcd.Limits.maxUploadMB", "90")
        try waitFor { limits.maxUploadMB == 90 }
        sizes.cancel()
        hosts.cancel()
    }

    @Test(.needsEtcd) func aReadAnsweredLateDoesNotTakeBackANewerWrite() throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "late/")
        let limits = Limits(store: store)
        limits.hosts = ["a"]
        let before = try cluster.put("late/etcd.Limits.unrelated", "1")
        limits.maxUploadMB = 70
        limits.hosts = []
        // A re-read of the prefix answered as of `before` (a compaction's re-read racing this store's writes):
        // it must neither bring back the older values nor announce them.
        let changed = try store.storage.readAll(revision: before)
        #expect(!changed.contains("etcd.Limits.maxUploadMB") && !changed.contains("etcd.Limits.hosts"))
        #expect(try store.value(forKey: "etcd.Limits.maxUploadMB") == .int(70))
        #expect(try store.value(forKey: "etcd.Limits.hosts") == .array([]))
        #expect(limits.maxUploadMB == 70 && limits.hosts == [])
    }

    @Test(.needsEtcd) func progressNotificationsKeepAQuietWatchOpenPastItsIdleLimit() throws {
        // etcd's notifications every second, against an idle limit of four: a quiet watch must stay the same.
        let cluster = try EtcdCluster(extraArguments: ["--experimental-watch-progress-notify-interval", "1s"])
        let store = try EtcdStore(
            endpoints: cluster.endpoints, prefix: "", credentials: nil, timeout: 2, watchIdleLimit: 4)
        let limits = Limits(store: store)
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        // Eight notifications a second apart: the watch has lived on them alone for about twice its idle limit,
        // and would have been opened again had they not counted.
        try waitFor(timeout: 40) { store.storage.watchStatistics.progressNotifications >= 8 }
        #expect(store.storage.watchStatistics.watchesOpened == 1)
        try cluster.put("etcd.Limits.maxUploadMB", "75")
        try waitFor { limits.maxUploadMB == 75 }
        #expect(store.storage.watchStatistics.watchesOpened == 1)
    }

    @Test(.needsEtcd) func aWatchThatHearsNothingForItsIdleLimitIsOpenedAgainAndCarriesOn() throws {
        // No progress notification within the limit (etcd's default is every 10 minutes): the watch is taken
        // for dead, as it would be behind a member that vanished without closing the connection.
        let cluster = try EtcdCluster()
        let store = try EtcdStore(
            endpoints: cluster.endpoints, prefix: "", credentials: nil, timeout: 2, watchIdleLimit: 1)
        let limits = Limits(store: store)
        try waitFor { store.storage.watchStatistics.watchesOpened >= 3 }
        try cluster.put("etcd.Limits.maxUploadMB", "65")
        try waitFor { limits.maxUploadMB == 65 }
    }

    @Test(
        .needsEtcd,
        .enabled(if: !EtcdCluster.isRunningUnderThreadSanitizer, "a minute of waiting adds nothing to a race check"))
    func aWatchStaysOpenThroughAQuietMinuteWithEtcdsDefaults() throws {
        // Longer than the 60 s that URLSession's request timeout would allow a quiet stream on Linux, with no
        // byte on the connection: etcd's default progress notifications come every 10 minutes.
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints)
        let limits = Limits(store: store)
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        Thread.sleep(forTimeInterval: 65)
        try cluster.put("etcd.Limits.maxUploadMB", "55")
        try waitFor { limits.maxUploadMB == 55 }
        let statistics = store.storage.watchStatistics
        #expect(statistics.watchesOpened == 1)
        #expect(statistics.progressNotifications == 0)
    }

    @Test(.needsEtcd) func aStoreNobodyUsesAnyMoreEndsItsWatch() throws {
        let cluster = try EtcdCluster()
        weak var storage: EtcdStorage?
        weak var watcher: EtcdWatcher?
        do {
            let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "dropped/")
            let limits = Limits(store: store)
            limits.maxUploadMB = 51
            storage = store.storage
            watcher = store.storage.watcherObject
            try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        }
        // The watch holds its store only while it takes a line: with no change under the prefix, nothing
        // keeps it, and its deinit stops the watch. The watcher's thread holds the watcher until it ends.
        try waitFor { storage == nil }
        try waitFor { watcher == nil }
    }
}

extension EtcdStoreTests {
    @Test(.needsEtcd) func aWatchCutWhileCatchingUpResumesAfterTheLastEventItTookAndMissesNothing() throws {
        // 2,500 changes made while the store's watch cannot open: etcd then sends them in lines of at most 1,000
        // revisions, each labelled with the cluster's current revision, and the proxy cuts the watch after the
        // first line. The next watch must start after the last event taken, not after that label.
        let cluster = try EtcdCluster()
        let proxy = WatchProxy(upstreamPort: cluster.members[0].clientPort)
        defer { proxy.stop() }
        proxy.mode = .refusingWatches
        let store = try EtcdStore(endpoints: [proxy.url], prefix: "catchup/", timeout: 2)
        let limits = Limits(store: store)
        let seen = Locked<[Int]>([])
        let token = limits.$maxUploadMB.observe { value in seen.withLock { $0.append(value) } }
        let key = "catchup/etcd.Limits.maxUploadMB"
        let base = store.storage.watchRevision
        var last: Int64 = 0
        for value in 1...2_500 { last = try cluster.put(key, "\(value)") }
        #expect(last == base + 2_500)
        proxy.mode = .cuttingAfterFirstEvents
        // The first line taken whole: 1,000 revisions, under the header of the last.
        try waitFor(timeout: 30) { proxy.cuts == 1 && seen.withLock { $0.count } >= 1_000 }
        // At any time the store holds a value no older than its revision: the value put at that revision.
        let consistent = { () -> Bool in
            guard let snapshot = store.storage.snapshotContents(), let text = snapshot.values["etcd.Limits.maxUploadMB"]
            else { return false }
            return text == "\(snapshot.revision - base)"
        }
        #expect(consistent())
        try waitFor(timeout: 30) { store.storage.watchRevision >= last }
        #expect(limits.maxUploadMB == 2_500)
        #expect(consistent())
        // And an observer saw every value, in order, once.
        try waitFor { seen.withLock { $0.last } == 2_500 }
        #expect(seen.withLock { $0 } == Array(1...2_500))
        #expect(store.storage.watchStatistics.watchesOpened == 2)
        token.cancel()
    }
}

extension EtcdStoreTests {
    /// Without etcd: a member that sends a line of events for revisions 3 and 4 under the header 2502 (a watch
    /// catching up), then a progress notification at 2502, and closes the watch after each.
    @Test func aWatchResumesAfterItsLastEventAndAfterAProgressNotificationsRevisionOnly() throws {
        let key = "resume/etcd.Limits.maxUploadMB"
        let watches = Locked(0)
        let member = FakeMember { request in
            switch request.path {
            case "/v3/kv/range":
                return .bytes(FakeMember.emptyRange(revision: 2))
            case "/v3/watch":
                let created = #"{"result":{"header":{"revision":"2502"},"created":true}}"#
                let events = (3...4).map {
                    #"{"kv":{"key":"\#(EtcdClient.base64(key))","value":"\#(EtcdClient.base64("\($0)"))","#
                        + #""mod_revision":"\#($0)"}}"#
                }
                let isFirst = watches.withLock { count in
                    count += 1
                    return count == 1
                }
                let line =
                    isFirst
                    ? #"{"result":{"header":{"revision":"2502"},"events":[\#(events.joined(separator: ","))]}}"#
                    : #"{"result":{"header":{"revision":"2502"}}}"#
                return .bytesThenClose(FakeMember.chunkedHead + FakeMember.chunk(created) + FakeMember.chunk(line))
            default:
                return .bytesThenClose(FakeMember.answer(404, "404 page not found"))
            }
        }
        let store = try EtcdStore(endpoints: [member.url], prefix: "resume/", timeout: 2)
        let limits = Limits(store: store)
        let starts = {
            member.requests.filter { $0.path == "/v3/watch" }.map { request -> String in
                let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any]
                return (body?["create_request"] as? [String: Any])?["start_revision"] as? String ?? ""
            }
        }
        try waitFor { starts().count >= 3 }
        #expect(Array(starts().prefix(3)) == ["3", "5", "2503"])
        #expect(limits.maxUploadMB == 4)
        store.storage.watcherObject?.stop()
    }
}

extension EtcdCluster {
    static let isRunningUnderThreadSanitizer: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
}

extension EtcdStoreTests {
    @Test(.needsEtcd) func aWatchOpenedWithAnExpiredTokenAuthenticatesAgain() throws {
        // etcd forgets a token unused for --auth-token-ttl seconds; a quiet watch uses its token only when it
        // opens. Here tokens live 1 s, and the watch is opened again after 4 quiet seconds.
        let cluster = try EtcdCluster(extraArguments: ["--auth-token-ttl", "1"])
        try cluster.enableAuthentication(rootPassword: "s3cret")
        let store = try EtcdStore(
            endpoints: cluster.endpoints, prefix: "", credentials: .init(user: "root", password: "s3cret"),
            timeout: 2, watchIdleLimit: 4)
        let limits = Limits(store: store)
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        try waitFor { store.storage.watchStatistics.watchesOpened >= 2 }
        // The first watch opened after the token expired was refused, and the next one authenticated again.
        #expect(store.storage.watchStatistics.watchesRefused >= 1)
        // It sees an outside put, before any write could have renewed the token.
        try cluster.put("etcd.Limits.maxUploadMB", "66")
        try waitFor { limits.maxUploadMB == 66 }

        // A write whose token has expired authenticates again too: a store whose watch stays open (it uses its
        // token only when it opens) writes after three quiet seconds.
        let quiet = Limits(
            store: try EtcdStore(
                endpoints: cluster.endpoints, prefix: "quiet/", credentials: .init(user: "root", password: "s3cret")))
        Thread.sleep(forTimeInterval: 3)
        quiet.maxUploadMB = 67
        #expect(try cluster.get("quiet/etcd.Limits.maxUploadMB") == "67")
    }

    @Test(.needsEtcd) func aUserWhoMayNoLongerReadThePrefixIsToldThatTheWatchWasRefused() throws {
        let cluster = try EtcdCluster()
        try cluster.enableAuthentication(rootPassword: "s3cret")
        _ = try cluster.call("auth/user/add", ["name": "guest", "password": "guest"])
        // A user who may not read the prefix at all is told so when the store is made.
        #expect {
            _ = try EtcdStore(
                endpoints: cluster.endpoints, prefix: "secret/", credentials: .init(user: "guest", password: "guest"))
        } throws: { error in
            "\(error)".contains("permission denied") && "\(error)".contains("prefix secret/")
        }
        // One who could read it when the store was made, and may no longer, is told once that the watch was
        // refused, when the watch is opened again.
        _ = try cluster.call("auth/role/add", ["name": "reader"])
        _ = try cluster.call(
            "auth/role/grant",
            [
                "name": "reader",
                "perm": [
                    "permType": "READ", "key": Data("secret/".utf8).base64EncodedString(),
                    "range_end": Data("secret0".utf8).base64EncodedString(),
                ],
            ])
        _ = try cluster.call("auth/user/grant", ["user": "guest", "role": "reader"])
        EtcdReports.install()
        let store = try EtcdStore(
            endpoints: cluster.endpoints, prefix: "secret/", credentials: .init(user: "guest", password: "guest"),
            timeout: 2, watchIdleLimit: 2)
        try waitFor { store.storage.watchStatistics.watchesOpened == 1 }
        _ = try cluster.call("auth/user/revoke", ["name": "guest", "role": "reader"])
        let report = "refused to watch the prefix \"secret/\""
        try waitFor { !EtcdReports.mentioning(report).isEmpty }
        // The next refusal, which the watcher meets when it tries again (after EtcdWatcher.refusedDelay): by then
        // anything it would say of the refusals before has been said.
        let refused = store.storage.watchStatistics.watchesRefused
        try waitFor(timeout: EtcdWatcher.refusedDelay + 20) {
            store.storage.watchStatistics.watchesRefused > refused
        }
        #expect(EtcdReports.mentioning(report).count == 1)
    }

    /// With no descriptor left (a low `ulimit -n` and many prefixes: each costs a thread and a few sockets), a
    /// store can neither read nor watch. That is reported once, naming the cause, not left silent. In a child
    /// process of its own, whose descriptor limit is lowered and used up; no member is needed.
    #if os(Linux)
        @Test func aWatchThatCannotConnectForWantOfDescriptorsIsReportedOnceNamingTheCause() async {
            await #expect(processExitsWith: .success) {
                EtcdReports.install()
                var limit = rlimit()
                _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                limit.rlim_cur = min(limit.rlim_cur, 256)
                _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                while open("/dev/null", O_RDONLY) >= 0 {}
                let store = try? EtcdStore(
                    endpoints: [URL(string: "http://127.0.0.1:9")!], prefix: "descriptors/", timeout: 1)
                let deadline = Date().addingTimeInterval(20)
                func reports() -> [String] {
                    EtcdReports.mentioning("prefix \"descriptors/\"").filter { $0.contains("Too many open files") }
                }
                while reports().isEmpty && Date() < deadline { usleep(50_000) }
                // Tried again and again meanwhile: still one report.
                usleep(2_000_000)
                let count = reports().count
                withExtendedLifetime(store) {}
                if count != 1 {
                    // Said on the child's standard error (no descriptor is needed for it), for the parent's log.
                    let said = EtcdReports.mentioning("descriptors/").joined(separator: "\n")
                    let text = "\(count) reports naming the cause; every report of the prefix:\n\(said)\n"
                    FileHandle.standardError.write(Data(text.utf8))
                }
                exit(count == 1 ? 0 : 1)
            }
        }
    #endif
}
