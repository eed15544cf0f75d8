import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// The next version of a server, which renamed a setting with `previousKeys`.
final class RenamedLimits: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting(previousKeys: ["etcd.Limits.region"]) var area = "default"
}

/// A renamed setting on a server started from its snapshot while no member answers: the move cannot be written,
/// the setting reads the earlier key's value all the same, and the move is written when the cluster answers. In
/// the serialized suite of the other etcd tests.
extension EtcdStoreTests {
    @Test(.needsEtcd) func aRenamedSettingReadsItsEarlierKeyFromTheSnapshotAndMovesItWhenTheClusterAnswers() throws {
        EtcdReports.install()
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("state/etcd-snapshot.json")
        let copy = directory.url.appendingPathComponent("state/new-version.json")
        let cluster = try EtcdCluster()
        // The older version stored the value under its key, and the snapshot holds it.
        do {
            let older = try EtcdStore(endpoints: cluster.endpoints, prefix: "moves/", timeout: 1, snapshot: path)
            try older.setValue(.string("eu-west"), forKey: "etcd.Limits.region")
            try waitFor { (try? Self.snapshotFields(path))?.values["etcd.Limits.region"] as? String == #""eu-west""# }
            try FileManager.default.copyItem(at: path, to: copy)
        }
        cluster.stop(0)

        // The new version starts during the outage.
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "moves/", timeout: 1, snapshot: copy)
        #expect(!store.isConnected)
        let server = RenamedLimits(store: store)
        #expect(server.area == "eu-west")
        #expect(EtcdReports.mentioning("etcd.RenamedLimits.area").contains { $0.contains("127.0.0.1") })
        let seen = Locked<[String]>([])
        let token = server.$area.observe { value in seen.withLock { $0.append(value) } }

        try cluster.start(0)
        try cluster.waitUntilHealthy()
        try waitFor { (try? cluster.get("moves/etcd.RenamedLimits.area")) == #""eu-west""# }
        try waitFor { (try? cluster.get("moves/etcd.Limits.region")) == nil }
        #expect(store.isConnected)
        #expect(server.area == "eu-west")
        // Nobody heard of the default, before or after.
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "eu-west" })
        // A server started now reads the moved value.
        let fresh = try EtcdStore(endpoints: cluster.endpoints, prefix: "moves/", timeout: 1)
        #expect(RenamedLimits(store: fresh).area == "eu-west")
        token.cancel()
    }

    /// The demo started on an older version's snapshot during an outage: the values the older version stored
    /// under its plain keys are read, not the defaults.
    @Test(.needsEtcd) func theDemoStartedOnAnOlderVersionsSnapshotDuringAnOutageReadsItsValues() throws {
        let directory = SnapshotDirectory()
        let path = directory.url.appendingPathComponent("demo-snapshot.json")
        let cluster = try EtcdCluster()
        let store = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/fleet/"
        // The seed article's hand-written code kept `isFirstLaunch` under its plain key.
        do {
            let older = try EtcdStore(endpoints: cluster.endpoints, prefix: "/fleet/", timeout: 1, snapshot: path)
            try older.setValue(.bool(false), forKey: "isFirstLaunch")
            try waitFor { (try? Self.snapshotFields(path))?.values["isFirstLaunch"] as? String == "false" }
        }
        cluster.stop(0)
        let environment = ["STORABLE_CONFIG_ETCD_SNAPSHOT": path.path]
        let offline = try Self.runDemo(["get", "app.isFirstLaunch", "--store", store], environment: environment)
        #expect(offline.output == "false\n", "\(offline.errorOutput)")
        let listed = try Self.runDemo(["list", "--json", "--store", store], environment: environment)
        let values = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
        #expect(values?["app.isFirstLaunch"] as? Bool == false, "\(listed.output) \(listed.errorOutput)")
    }
}
