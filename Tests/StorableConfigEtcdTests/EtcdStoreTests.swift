import Foundation
import StorableConfig
import StorableConfigEtcd
import StorableConfigTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// EtcdStore against a real etcd, one suite at a time.
@Suite(.serialized)
struct EtcdStoreTests {
    @Test(.needsEtcd) func theStorePassesTheConformanceSuite() throws {
        let cluster = try EtcdCluster()
        let endpoints = cluster.endpoints
        try ConfigStoreConformance(makeStore: { try EtcdStore(endpoints: endpoints, prefix: "conformance/") }).run()
        withExtendedLifetime(cluster) {}
    }

    @Test(.needsEtcd) func anAssignmentIsReadableJSONInEtcdAndAnOutsidePutReachesTheConfigAndItsObservers() throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "prod/")
        let limits = Limits(store: store)
        limits.maxUploadMB = 80
        limits.hosts = ["a", "b"]
        #expect(try cluster.get("prod/etcd.Limits.maxUploadMB") == "80")
        #expect(try cluster.get("prod/etcd.Limits.hosts") == #"["a","b"]"#)
        let seen = Locked<[Int]>([])
        let token = limits.$maxUploadMB.observe { value in seen.withLock { $0.append(value) } }
        try cluster.put("prod/etcd.Limits.maxUploadMB", "120")
        try waitFor { limits.maxUploadMB == 120 }
        try waitFor { seen.withLock { $0 }.contains(120) }
        // A second server, with its own store and cache, reads what the first wrote.
        let other = Limits(store: try EtcdStore(endpoints: cluster.endpoints.map(Self.localhost), prefix: "prod/"))
        #expect(other.maxUploadMB == 120)
        limits.maxUploadMB = 130
        try waitFor { other.maxUploadMB == 130 }
        token.cancel()
    }

    @Test(.needsEtcd) func aValueThatIsNotJSONIsReportedAndLeftAlone() throws {
        let cluster = try EtcdCluster()
        try cluster.put("plain/etcd.Limits.maxUploadMB", "plain")
        EtcdReports.install()
        let limits = Limits(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "plain/"))
        #expect(limits.maxUploadMB == 50)
        #expect(EtcdReports.mentioning("plain/etcd.Limits.maxUploadMB").contains { $0.contains("JSON") })
        #expect(try cluster.get("plain/etcd.Limits.maxUploadMB") == "plain")
    }

    @Test(.needsEtcd) func twoServersUpsertingIntoOneCollectionLoseNothing() throws {
        let cluster = try EtcdCluster()
        // Two stores whose identities differ, as two processes' would: their writes race in etcd.
        let first = Limits(store: try EtcdStore(endpoints: cluster.endpoints))
        let second = Limits(store: try EtcdStore(endpoints: cluster.endpoints.map(Self.localhost)))
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let config = worker == 0 ? first : second
            for index in 0..<25 { config.servers.upsert(Server(id: "w\(worker)-\(index)", port: index)) }
        }
        // What the cluster holds: every record of both.
        let stored = try StoredValue(jsonText: try #require(try cluster.get("etcd.Limits.servers")))
        guard case .dictionary(let records) = stored else {
            Issue.record("the collection is \(stored)")
            return
        }
        #expect(records.count == 50)
        // And each server reads them all once its watch has brought the other's last write.
        try waitFor { first.servers.count == 50 && second.servers.count == 50 }
    }

    @Test func anUnreachableClusterDoesNotHangAndAWriteFailsNamingTheEndpoints() throws {
        let port = EtcdCluster.freePort()
        let started = Date()
        let store = try EtcdStore(endpoints: [URL(string: "http://127.0.0.1:\(port)")!], timeout: 1)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!store.isConnected)
        #expect {
            try store.setValue(.int(1), forKey: "k")
        } throws: { error in
            "\(error)".contains("127.0.0.1:\(port)")
        }
    }

    @Test func aConfigOnAClusterThatDoesNotAnswerReadsItsDefaultsAndAnAssignmentIsReportedAndNotBelieved() throws {
        EtcdReports.install()
        let port = EtcdCluster.freePort()
        let store = try EtcdStore(endpoints: [URL(string: "http://127.0.0.1:\(port)")!], timeout: 1)
        let limits = Limits(store: store)
        #expect(limits.maxUploadMB == 50)
        #expect(store.provenance == .none)
        limits.maxUploadMB = 80
        #expect(limits.maxUploadMB == 50)
        // The assignment, once; the watch that cannot be set up is reported apart, once.
        let reported = EtcdReports.mentioning("127.0.0.1:\(port)").filter { !$0.contains("the watch of the prefix") }
        #expect(reported.count == 1)
        #expect(reported.allSatisfy { $0.contains("'etcd.Limits.maxUploadMB'") && $0.contains("failed") })
    }

    @Test func membersThatNeverAnswerHoldTheStoresCreationToThreeTimeoutsInAll() throws {
        // Five listeners that take the connection and say nothing, as a hung member would.
        let silent = (0..<5).map { _ in EtcdCluster.silentListener() }
        defer { for (descriptor, _) in silent { close(descriptor) } }
        let started = Date()
        let store = try EtcdStore(
            endpoints: silent.map { URL(string: "http://127.0.0.1:\($0.port)")! }, timeout: 1)
        let waited = Date().timeIntervalSince(started)
        // Three timeouts of 1 s, not five; the upper bound with a margin of two for a loaded machine.
        #expect(waited >= 2.5 && waited < 6, "waited \(waited) s")
        #expect(!store.isConnected)
    }

    @Test(.needsEtcd) func aValueOverEtcdsRequestLimitIsAnErrorNamingTheKeyAndItsSize() throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "big/")
        let limits = Limits(store: store)
        limits.hosts = ["small"]
        EtcdReports.install()
        // Over etcd's default --max-request-bytes of 1.5 MiB (etcd's own check), and over the 2 MiB its gRPC
        // server takes at all (refused before etcd looks at it, in other words).
        for size in [2_000_000, 3_000_000] {
            limits.hosts = [String(repeating: "x", count: size)]
            let expected = "big/etcd.Limits.hosts is \(size + 4) bytes"
            try waitFor { !EtcdReports.mentioning(expected).isEmpty }
            #expect(EtcdReports.mentioning(expected).allSatisfy { $0.contains("too large") })
            // Nothing is lost: the cluster keeps the value it had.
            #expect(try cluster.get("big/etcd.Limits.hosts") == #"["small"]"#)
        }
    }

    @Test(.needsEtcd) func aBatchOverOneTransactionIsRefusedAndNothingIsWritten() throws {
        let cluster = try EtcdCluster()
        let store = try EtcdStore(endpoints: cluster.endpoints)
        var values: [String: StoredValue] = [:]
        for index in 0..<129 { values["k\(index)"] = .int(Int64(index)) }
        #expect {
            try store.setValues(values, removingValuesForKeys: [])
        } throws: { error in
            "\(error)".contains("128")
        }
        #expect(try cluster.get("k0") == nil)
    }

    @Test(.needsEtcd) func aUserAndPasswordGiveATokenAndAWrongPasswordIsAClearError() throws {
        let cluster = try EtcdCluster()
        try cluster.enableAuthentication(rootPassword: "s3cret")
        let store = try EtcdStore(
            endpoints: cluster.endpoints, credentials: .init(user: "root", password: "s3cret"))
        let limits = Limits(store: store)
        limits.maxUploadMB = 70
        #expect(try store.value(forKey: "etcd.Limits.maxUploadMB") == .int(70))
        #expect {
            _ = try EtcdStore(endpoints: cluster.endpoints, credentials: .init(user: "root", password: "wrong"))
        } throws: { error in
            "\(error)".contains("authentication failed") || "\(error)".contains("invalid")
        }
    }

    static func localhost(_ url: URL) -> URL {
        URL(string: url.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))!
    }
}

final class Limits: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting var maxUploadMB = 50
    @Setting var hosts: [String] = []
    @Records var servers: RecordCollection<Server>
}

struct Server: Codable, Identifiable, Sendable {
    var id: String
    var port: Int
}

/// A value and a lock, for observers.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
