import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The last-known-good snapshot against real etcd: written owner-only, started from while every member is
/// stopped, replaced by the cluster's values (delivered as changes) when it answers; a corrupt or foreign one set
/// aside. In the serialized suite of the other etcd tests.
extension EtcdStoreTests {
    @Test(.needsEtcd)
    func aStoreStartedWhileNoMemberAnswersReadsTheSnapshotAndTakesTheClustersValuesAsChanges() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("state/etcd-snapshot.json")
        let cluster = try EtcdCluster()
        let first = try EtcdStore(endpoints: cluster.endpoints, prefix: "snap/", timeout: 1, snapshot: path)
        let limits = Limits(store: first)
        limits.maxUploadMB = 80
        limits.hosts = ["a", "b"]
        let key = "etcd.Limits.maxUploadMB"
        try waitFor { (try? Self.snapshotFields(path))?.values[key] as? String == "80" }

        // The file, read with JSONSerialization: owner-only, in a directory made owner-only, of this cluster.
        #expect(Self.mode(of: path) == 0o600)
        #expect(Self.mode(of: path.deletingLastPathComponent()) == 0o700)
        let fields = try Self.snapshotFields(path)
        let header = try #require(try cluster.call("kv/range", ["key": "AA=="])["header"] as? [String: Any])
        #expect(fields.document["cluster_id"] as? String == header["cluster_id"] as? String)
        #expect(fields.document["prefix"] as? String == "snap/")
        #expect(fields.document["endpoints"] as? [String] == cluster.endpoints.map(\.absoluteString))
        #expect(fields.document["format"] as? String == "storable-config-etcd-snapshot")
        #expect(fields.values["etcd.Limits.hosts"] as? String == #"["a","b"]"#)
        let revision = try #require(Int64(fields.document["revision"] as? String ?? ""))
        #expect(revision >= 2)

        // Another server's copy of the file (a store of its own, as in another process), then the cluster moves on
        // and every member stops.
        let copy = directory.url.appendingPathComponent("state/other-server.json")
        try FileManager.default.copyItem(at: path, to: copy)
        _ = try cluster.put("snap/\(key)", "120")
        try cluster.delete("snap/etcd.Limits.hosts")
        cluster.stop(0)

        let started = Date()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "snap/", timeout: 1, snapshot: copy)
        #expect(Date().timeIntervalSince(started) < 4)
        let server = Limits(store: store)
        #expect(server.maxUploadMB == 80)
        #expect(server.hosts == ["a", "b"])
        #expect(!store.isConnected)
        guard case .snapshot(let seededRevision, let written) = store.provenance else {
            Issue.record("the provenance is \(store.provenance), not the snapshot")
            return
        }
        #expect(seededRevision == revision)
        #expect(abs(written.timeIntervalSinceNow) < 60)
        let outage = EtcdReports.mentioning(copy.path)
        #expect(outage.count == 1)
        #expect(outage.allSatisfy { $0.contains("starts from its snapshot") })

        // An assignment while no member answers fails, is reported, and is not believed here.
        server.maxUploadMB = 99
        #expect(server.maxUploadMB == 80)
        #expect(
            EtcdReports.mentioning("'etcd.Limits.maxUploadMB'").contains { $0.contains("127.0.0.1") })

        let seen = Locked<[String]>([])
        let token = server.$maxUploadMB.observe { value in seen.withLock { $0.append("maxUploadMB \(value)") } }
        let hostsToken = server.$hosts.observe { value in seen.withLock { $0.append("hosts \(value)") } }
        try cluster.start(0)
        try cluster.waitUntilHealthy()
        try waitFor { server.maxUploadMB == 120 && server.hosts.isEmpty }
        try waitFor { seen.withLock { $0 }.sorted() == ["hosts []", "maxUploadMB 120"] }
        #expect(store.isConnected)
        guard case .cluster = store.provenance else {
            Issue.record("the provenance is \(store.provenance), not the cluster")
            return
        }
        // The failed assignment was never sent later; the copy now holds the cluster's values.
        #expect(try cluster.get("snap/\(key)") == "120")
        try waitFor { (try? Self.snapshotFields(copy))?.values[key] as? String == "120" }
        #expect(try Self.snapshotFields(copy).values["etcd.Limits.hosts"] == nil)
        #expect(EtcdReports.mentioning(copy.path).count == 1)
        token.cancel()
        hostsToken.cancel()
        withExtendedLifetime(first) {}
    }

    @Test func aCorruptSnapshotOrOneOfAnotherPrefixOrEndpointsIsSetAsideReportedAndNotUsed() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let endpoints = [URL(string: "http://127.0.0.1:\(EtcdCluster.freePort())")!]
        let good = EtcdSnapshot(
            endpoints: endpoints, prefix: "aside/", clusterID: "42", revision: 7, written: Date(),
            values: ["etcd.Limits.maxUploadMB": "77"])
        let cases: [(name: String, text: String, reason: String)] = [
            ("corrupt", #"{"format":"storable-config-etcd-snapshot","#, "not JSON text"),
            (
                "prefix",
                EtcdSnapshot(
                    endpoints: endpoints, prefix: "other/", clusterID: "42", revision: 7, written: Date(),
                    values: good.values
                ).jsonText(), #"of the prefix "other/""#
            ),
            (
                "endpoints",
                EtcdSnapshot(
                    endpoints: [URL(string: "http://10.1.1.1:2379")!], prefix: "aside/", clusterID: "42", revision: 7,
                    written: Date(), values: good.values
                ).jsonText(), "of the endpoints http://10.1.1.1:2379"
            ),
        ]
        for (name, text, reason) in cases {
            let path = directory.url.appendingPathComponent("\(name).json")
            try Data(text.utf8).write(to: path)
            // Whatever the umask: a group-writable file would be reported as such too.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path.path)
            let store = try EtcdStore(endpoints: endpoints, prefix: "aside/", timeout: 1, snapshot: path)
            #expect(Limits(store: store).maxUploadMB == 50, "\(name)")
            #expect(store.provenance == .none, "\(name)")
            let reported = EtcdReports.mentioning(path.path)
            #expect(reported.count == 1, "\(name)")
            #expect(reported.allSatisfy { $0.contains(reason) && $0.contains("set aside") }, "\(name): \(reported)")
            // Kept beside it, byte for byte; nothing at the path.
            #expect(!FileManager.default.fileExists(atPath: path.path), "\(name)")
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
                $0.hasPrefix("\(name).json.unused-")
            }
            #expect(kept.count == 1, "\(name)")
            let keptText = try String(
                contentsOf: directory.url.appendingPathComponent(kept.first ?? ""), encoding: .utf8)
            #expect(keptText == text, "\(name)")
        }
        // The same file with the store's own prefix and endpoints is used.
        let path = directory.url.appendingPathComponent("good.json")
        try good.write(to: path)
        let store = try EtcdStore(endpoints: endpoints, prefix: "aside/", timeout: 1, snapshot: path)
        #expect(Limits(store: store).maxUploadMB == 77)
        guard case .snapshot(let revision, let written) = store.provenance else {
            Issue.record("the provenance is \(store.provenance), not the snapshot")
            return
        }
        #expect(revision == 7)
        #expect(abs(written.timeIntervalSince(good.written)) < 0.01)
    }

    /// A snapshot that another user may have written is refused (set aside and reported), as ssh refuses its
    /// files: one owned by another user, one every user may write, one in a directory that every user may write
    /// without the sticky bit. One its group may write (a Kubernetes fsGroup volume) is used and reported once;
    /// one in a sticky world-writable directory (`/tmp`) is used in silence. Before, each was used. A FIFO is
    /// refused as not a regular file, without waiting for a writer (it was "You don't have permission").
    /// Processes of different prefixes given one snapshot path set each other's snapshot aside at every start:
    /// only the newest few set aside are kept beside it, and the report names those removed.
    @Test func snapshotsSetAsideBesideOnePathAreBounded() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let endpoints = [URL(string: "http://127.0.0.1:\(EtcdCluster.freePort())")!]
        let path = directory.url.appendingPathComponent("shared.json")
        func setAside() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix("shared.json.unused-") }.sorted()
        }
        var removedReports: [String] = []
        for round in 0..<(EtcdSnapshot.setAsideKept + 3) {
            // Another prefix's process wrote the file last.
            try EtcdSnapshot(
                endpoints: endpoints, prefix: "other-\(round)/", clusterID: "42", revision: 7, written: Date(),
                values: ["etcd.Limits.maxUploadMB": "\(round)"]
            ).write(to: path)
            let before = try setAside()
            _ = try EtcdStore(endpoints: endpoints, prefix: "bounded/", timeout: 1, snapshot: path)
            let after = try setAside()
            #expect(after.count == min(before.count + 1, EtcdSnapshot.setAsideKept), "round \(round): \(after)")
            // The newest is the one just set aside: it holds this round's value.
            let newest = try String(
                contentsOf: directory.url.appendingPathComponent(after.last ?? ""), encoding: .utf8)
            #expect(newest.contains("other-\(round)/"), "round \(round)")
            let gone = before.filter { !after.contains($0) }
            if let report = EtcdReports.mentioning(path.path).last, !gone.isEmpty {
                #expect(gone.allSatisfy { report.contains($0) }, "\(report)")
                removedReports.append(report)
            }
        }
        #expect(removedReports.count == 3)
    }

    @Test(arguments: [
        "world-writable", "in a world-writable directory", "group-writable", "in a sticky world-writable directory",
        "a FIFO",
    ])
    func aSnapshotThatAnotherUserMayHaveWrittenIsRefused(kind: String) throws {
        try checkSnapshotTrust(kind: kind)
    }

    @Test(.enabled(if: geteuid() == 0, "giving a file to another user takes root"))
    func aSnapshotOwnedByAnotherUserIsRefused() throws {
        try checkSnapshotTrust(kind: "another user's")
    }

    private func checkSnapshotTrust(kind: String) throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let folder = directory.url.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("snapshot.json")
        let endpoints = [URL(string: "http://127.0.0.1:\(EtcdCluster.freePort())")!]
        try EtcdSnapshot(
            endpoints: endpoints, prefix: "trust/", clusterID: "42", revision: 7, written: Date(),
            values: ["etcd.Limits.maxUploadMB": "77"]
        ).write(to: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let reason: String?
        switch kind {
        case "another user's":
            #expect(chown(path.path, 65_534, 65_534) == 0)
            reason = "owned by the user 65534"
        case "world-writable":
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path.path)
            reason = "every user may write it (mode 0666)"
        case "in a world-writable directory":
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
            reason = "may be written by every user and has no sticky bit (mode 0777)"
        case "a FIFO":
            try FileManager.default.removeItem(at: path)
            #expect(mkfifo(path.path, 0o600) == 0)
            reason = "it is not a regular file"
        case "group-writable":
            try FileManager.default.setAttributes([.posixPermissions: 0o660], ofItemAtPath: path.path)
            reason = nil
        default:
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: folder.path)
            reason = nil
        }
        let store = try EtcdStore(endpoints: endpoints, prefix: "trust/", timeout: 1, snapshot: path)
        let reports = EtcdReports.mentioning(path.path)
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("snapshot.json.unused-")
        }
        if let reason {
            #expect(Limits(store: store).maxUploadMB == 50)
            #expect(store.provenance == .none)
            #expect(reports.count == 1 && reports.allSatisfy { $0.contains(reason) && $0.contains("set aside") })
            #expect(kept.count == 1 && !FileManager.default.fileExists(atPath: path.path))
        } else {
            #expect(Limits(store: store).maxUploadMB == 77)
            #expect(kept.isEmpty)
            let group = reports.filter { $0.contains("may be written by its group") }
            #expect(group.count == (kind == "group-writable" ? 1 : 0), "\(reports)")
        }
    }

    @Test(.needsEtcd) func aSnapshotOfAnotherClusterIsSetAsideWhenTheClusterAnswersAndItsValuesAreReplaced() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("foreign.json")
        let cluster = try EtcdCluster()
        _ = try cluster.put("foreign/etcd.Limits.maxUploadMB", "60")
        let foreign = EtcdSnapshot(
            endpoints: cluster.endpoints, prefix: "foreign/", clusterID: "1", revision: 3, written: Date(),
            values: ["etcd.Limits.maxUploadMB": "7", "etcd.Limits.hosts": #"["x"]"#])
        try foreign.write(to: path)
        cluster.stop(0)
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "foreign/", timeout: 1, snapshot: path)
        let limits = Limits(store: store)
        // Nothing tells, before the cluster answers, that the file is of another cluster.
        #expect(limits.maxUploadMB == 7)
        try cluster.start(0)
        try cluster.waitUntilHealthy()
        try waitFor { limits.maxUploadMB == 60 && limits.hosts.isEmpty }
        let reported = EtcdReports.mentioning(path.path)
        #expect(reported.contains { $0.contains("of the cluster 1") && $0.contains("set aside") })
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix("foreign.json.unused-")
        }
        #expect(kept.count == 1)
        // A new snapshot, of this cluster, takes its place.
        try waitFor { (try? Self.snapshotFields(path))?.values["etcd.Limits.maxUploadMB"] as? String == "60" }
        #expect(try Self.snapshotFields(path).document["cluster_id"] as? String != "1")
    }

    @Test(.needsEtcd) func snapshotWritesAreCoalescedToAFewASecond() throws {
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("coalesced.json")
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "burst/", timeout: 3, snapshot: path)
        let limits = Limits(store: store)
        let started = Date()
        for value in 1...60 { limits.maxUploadMB = value }
        try waitFor { (try? Self.snapshotFields(path))?.values["etcd.Limits.maxUploadMB"] as? String == "60" }
        let elapsed = Date().timeIntervalSince(started)
        let writes = try #require(store.storage.snapshotWriter?.writes)
        // One at start, then at most one per quarter of a second (and one at the end of the burst).
        #expect(writes <= 3 + Int(elapsed / EtcdSnapshotWriter.interval), "\(writes) writes in \(elapsed) s")
        // The file holds the last value, so it was written at least once (the count is taken after the file).
        #expect(writes >= 1)
    }

    /// A store that read the cluster has its snapshot on disk when its initialiser returns, also when the writer's
    /// queue began that write first: the demo's `get` once exited before the queue's write ended, and left none.
    @Test(.needsEtcd) func aStoreHasItsSnapshotOnDiskWhenItsInitialiserReturns() throws {
        let directory = SnapshotDirectory()
        let cluster = try EtcdCluster()
        try cluster.put("made/etcd.Limits.maxUploadMB", "77")
        for round in 0..<40 {
            let path = directory.url.appendingPathComponent("made-\(round).json")
            let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "made/", timeout: 3, snapshot: path)
            #expect(
                (try? Self.snapshotFields(path))?.values["etcd.Limits.maxUploadMB"] as? String == "77",
                "round \(round): no snapshot yet")
            withExtendedLifetime(store) {}
        }
    }

    /// Stores with snapshots created, written through and released on several threads at once, while their
    /// writers' queues write: `init`, `deinit` and the queue all take the writer's lock. None hangs (a hang is a
    /// minute without a round done), and every snapshot file is whole JSON holding the key.
    @Test(.needsEtcd) func storesWithSnapshotsMadeAndReleasedOnManyThreadsNeitherHangNorLeaveAPartFile() async throws {
        let directory = SnapshotDirectory()
        let cluster = try EtcdCluster()
        let endpoints = cluster.endpoints
        let folder = directory.url
        let rounds = EtcdCluster.isRunningUnderThreadSanitizer ? 8 : 20
        let progress = Locked(0)
        let failures = Locked<[String]>([])
        for worker in 0..<4 {
            Thread {
                let path = folder.appendingPathComponent("churn-\(worker).json")
                for round in 0..<rounds {
                    do {
                        let store = try EtcdStore(endpoints: endpoints, prefix: "churn/", timeout: 3, snapshot: path)
                        Limits(store: store).maxUploadMB = worker * 100 + round + 1
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    progress.withLock { $0 += 1 }
                }
            }.start()
        }
        var last = (rounds: 0, at: Date())
        while progress.withLock({ $0 }) < 4 * rounds, Date().timeIntervalSince(last.at) < 60 {
            try await Task.sleep(for: .milliseconds(50))
            let done = progress.withLock { $0 }
            if done != last.rounds { last = (done, Date()) }
        }
        #expect(progress.withLock { $0 } == 4 * rounds, "stores with snapshots hung after \(last.rounds) rounds")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        for worker in 0..<4 {
            let path = directory.url.appendingPathComponent("churn-\(worker).json")
            #expect((try? Self.snapshotFields(path))?.values["etcd.Limits.maxUploadMB"] != nil, "churn-\(worker).json")
        }
    }

    /// A snapshot path that is a symbolic link (to a persistent volume, say) stays one: each write goes to the file
    /// it leads to, a relative link resolved against its own directory, and a snapshot set aside is the file at
    /// the end, beside it. Before, the first write replaced the link with a file, and the volume's file never
    /// changed again.
    @Test(.needsEtcd)
    func aSnapshotPathThatIsASymbolicLinkIsWrittenThroughTheLink() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let volume = directory.url.appendingPathComponent("volume")
        let app = directory.url.appendingPathComponent("app")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let link = app.appendingPathComponent("snapshot.json")
        let target = volume.appendingPathComponent("snapshot.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../volume/snapshot.json")
        let isLink = { (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil }
        let key = "etcd.Limits.maxUploadMB"
        let cluster = try EtcdCluster()
        do {
            let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "linked/", timeout: 2, snapshot: link)
            let limits = Limits(store: store)
            limits.maxUploadMB = 80
            try waitFor { (try? Self.snapshotFields(target))?.values[key] as? String == "80" }
            #expect(isLink())
            limits.maxUploadMB = 81
            try waitFor { (try? Self.snapshotFields(target))?.values[key] as? String == "81" }
            #expect(isLink())
            #expect(Self.mode(of: target) == 0o600)
        }
        // A snapshot that cannot be used is set aside beside the file the link leads to; the link stays, and the
        // next snapshot is written through it. (Another prefix: a store of the same one could share the first's
        // state, which has read its snapshot already.)
        try Data("{".utf8).write(to: target)
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "relinked/", timeout: 2, snapshot: link)
        let report = try #require(EtcdReports.mentioning(link.path).last)
        #expect(report.contains("set aside as \(target.path).unused-"), "\(report)")
        let contents = try FileManager.default.contentsOfDirectory(atPath: volume.path)
        #expect(contents.contains { $0.hasPrefix("snapshot.json.unused-") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.path) == ["snapshot.json"])
        #expect(isLink())
        try waitFor { (try? Self.snapshotFields(target))?.document["prefix"] as? String == "relinked/" }
        withExtendedLifetime(store) {}
    }

    /// The snapshot at `url` as JSONSerialization reads it, and its values.
    static func snapshotFields(_ url: URL) throws -> (document: [String: Any], values: [String: Any]) {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let document = object as? [String: Any], let values = document["values"] as? [String: Any] else {
            throw EtcdTestError(description: "\(url.path) is not a snapshot document")
        }
        return (document, values)
    }

    static func mode(of url: URL) -> Int {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return -1 }
        return Int(status.st_mode) & 0o777
    }
}

/// A temporary directory, removed when the value is released.
final class SnapshotDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("etcd-snapshot-\(UUID().uuidString)")

    init() {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
