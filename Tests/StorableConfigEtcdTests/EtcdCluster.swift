import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real etcd members on 127.0.0.1, free ports and a temporary data directory each, stopped by process id.
final class EtcdCluster: @unchecked Sendable {
    struct Member {
        let name: String
        var clientPort: Int
        let peerPort: Int
        let dataDirectory: URL
        var process: Process?
        /// `http` or `https`.
        var scheme = "http"
        /// The address the member listens on: 127.0.0.1, or a network namespace's.
        var host = "127.0.0.1"
        var clientURL: URL { URL(string: "\(scheme)://\(host):\(clientPort)")! }
    }

    /// How the members serve TLS: the certificates, and the member's own certificate and key.
    struct TLSSetup {
        let certificates: TestCertificates
        var serverCertificate: URL
        var serverKey: URL
        /// etcd's `--client-cert-auth`: a client must show a certificate the CA signed.
        var requiresClientCertificates = true

        init(_ certificates: TestCertificates, requiresClientCertificates: Bool = true) {
            self.certificates = certificates
            serverCertificate = certificates.server.certificate
            serverKey = certificates.server.key
            self.requiresClientCertificates = requiresClientCertificates
        }

        /// What the tests' own requests show: the CA and the client certificate.
        var clientTLS: EtcdStore.TLS {
            EtcdStore.TLS(
                caFile: certificates.ca, certificateFile: certificates.client.certificate,
                keyFile: certificates.client.key)
        }
    }

    let tls: TLSSetup?
    /// Opens the tests' own connections to the members.
    let connector: Connector
    /// Run each member's command through this (`ip netns exec NAME`), if given.
    private let launcher: [String]

    static let binary = ["/usr/bin/etcd", "/usr/local/bin/etcd"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why the etcd tests cannot run here, or `nil`.
    static let unavailable: String? =
        binary == nil ? "etcd is not installed: apt-get install -y etcd-server etcd-client" : nil

    /// Whether a missing etcd (or a tool an etcd test needs) fails the tests instead of skipping them: under CI,
    /// where `.ci/run` sets `STORABLE_CONFIG_REQUIRE_ETCD=1`.
    static let isRequired = ProcessInfo.processInfo.environment["STORABLE_CONFIG_REQUIRE_ETCD"] == "1"

    private(set) var members: [Member]
    let token = "storable-config-\(UUID().uuidString.prefix(8))"
    private let root: URL

    /// Options added to every member's command line.
    private let extraArguments: [String]

    init(
        size: Int = 1, extraArguments: [String] = [], tls: TLSSetup? = nil, host: String = "127.0.0.1",
        launcher: [String] = [], waitingUntilHealthy: Bool = true
    ) throws {
        // Reached without etcd only under CI (`.needsEtcd` skips the test elsewhere): a failure, saying why.
        if let unavailable = Self.unavailable { throw EtcdTestError(description: unavailable) }
        self.extraArguments = extraArguments
        self.tls = tls
        self.launcher = launcher
        connector = Connector(tls: try tls.map { try TLSContext($0.clientTLS) })
        root = FileManager.default.temporaryDirectory.appendingPathComponent("etcd-\(UUID().uuidString)")
        let root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        members = (0..<size).map { index in
            Member(
                name: "m\(index)", clientPort: EtcdCluster.freePort(), peerPort: EtcdCluster.freePort(),
                dataDirectory: root.appendingPathComponent("m\(index)"), process: nil,
                scheme: tls == nil ? "http" : "https",
                host: host)
        }
        for index in members.indices { try start(index) }
        if waitingUntilHealthy { try waitUntilHealthy() }
    }

    deinit {
        for index in members.indices { stop(index) }
        try? FileManager.default.removeItem(at: root)
    }

    var endpoints: [URL] { members.map(\.clientURL) }

    /// Starts member `index` again, serving clients on `clientPort` if given (its data and peers unchanged).
    func start(_ index: Int, clientPort: Int? = nil) throws {
        if let clientPort { members[index].clientPort = clientPort }
        let member = members[index]
        let cluster = members.map { "\($0.name)=\($0.scheme)://\($0.host):\($0.peerPort)" }.joined(separator: ",")
        var security: [String] = []
        if let tls {
            security = [
                "--cert-file", tls.serverCertificate.path, "--key-file", tls.serverKey.path,
                "--trusted-ca-file", tls.certificates.ca.path,
                "--peer-cert-file", tls.serverCertificate.path, "--peer-key-file", tls.serverKey.path,
                "--peer-trusted-ca-file", tls.certificates.ca.path, "--peer-client-cert-auth",
            ]
            if tls.requiresClientCertificates { security.append("--client-cert-auth") }
        }
        let process = Process()
        let etcd = Self.binary ?? "/usr/bin/etcd"
        process.executableURL = URL(fileURLWithPath: launcher.first ?? etcd)
        process.arguments =
            launcher.dropFirst() + (launcher.isEmpty ? [] : [etcd])
            + [
                "--name", member.name, "--data-dir", member.dataDirectory.path,
                "--listen-client-urls", member.clientURL.absoluteString,
                "--advertise-client-urls", member.clientURL.absoluteString,
                "--listen-peer-urls", "\(member.scheme)://\(member.host):\(member.peerPort)",
                "--initial-advertise-peer-urls", "\(member.scheme)://\(member.host):\(member.peerPort)",
                "--initial-cluster", cluster, "--initial-cluster-state", "new", "--initial-cluster-token", token,
                // Generous for a loaded 2-core machine.
                "--heartbeat-interval", "200", "--election-timeout", "2000",
                "--log-level", "error", "--logger", "zap",
            ] + security + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        members[index].process = process
    }

    /// SIGKILL, and wait for the process to exit so that its data directory can be used again.
    func stop(_ index: Int) {
        guard let process = members[index].process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        members[index].process = nil
    }

    /// SIGSTOP: the member keeps its sockets (the kernel still accepts connections and acknowledges bytes) and
    /// answers nothing, as a hung process or a paused VM would. ``thaw(_:)`` or ``stop(_:)`` ends it.
    func freeze(_ index: Int) {
        guard let process = members[index].process else { return }
        kill(process.processIdentifier, SIGSTOP)
    }

    /// SIGCONT after ``freeze(_:)``.
    func thaw(_ index: Int) {
        guard let process = members[index].process else { return }
        kill(process.processIdentifier, SIGCONT)
    }

    /// Puts `value` under `key` through member `index`, trying again until the cluster takes it (an election
    /// may be under way) or `timeout` passes. Returns the revision it made.
    @discardableResult
    func put(_ key: String, _ value: String, through index: Int, timeout: TimeInterval = 20) throws -> Int64 {
        let deadline = Date().addingTimeInterval(timeout)
        let body = ["key": Data(key.utf8).base64EncodedString(), "value": Data(value.utf8).base64EncodedString()]
        while true {
            let answer = (try? call("kv/put", body, at: members[index].clientURL)) ?? [:]
            if let revision = ((answer["header"] as? [String: Any])?["revision"] as? String).flatMap({ Int64($0) }) {
                return revision
            }
            guard Date() < deadline else {
                throw EtcdTestError(description: "member \(index) did not take the put of \(key): \(answer)")
            }
            usleep(100_000)
        }
    }

    func waitUntilHealthy(timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        for member in members where member.process != nil {
            // Ready when it serves a read (which needs a leader).
            var problem = ""
            try waitFor(
                timeout: max(0, deadline.timeIntervalSinceNow), every: 0.1,
                failure: "etcd \(member.name) did not become healthy: \(problem)"
            ) {
                do {
                    return try call("kv/range", ["key": "AA=="], at: member.clientURL)["header"] != nil
                } catch {
                    problem = "\(error)"
                    return false
                }
            }
        }
    }

    /// The index of the member that leads, as the members' status says.
    func leaderIndex() -> Int? {
        for (index, member) in members.enumerated() where member.process != nil {
            let status = (try? call("maintenance/status", [:], at: member.clientURL)) ?? [:]
            let header = status["header"] as? [String: Any]
            if let leader = status["leader"] as? String, let id = header?["member_id"] as? String, leader == id {
                return index
            }
        }
        return nil
    }

    /// What `etcdctl put` does: a raw put of `value` under `key`, through the JSON gateway. Returns the
    /// revision it made.
    @discardableResult
    func put(_ key: String, _ value: String) throws -> Int64 {
        let answer = try call(
            "kv/put", ["key": Data(key.utf8).base64EncodedString(), "value": Data(value.utf8).base64EncodedString()])
        return Int64((answer["header"] as? [String: Any])?["revision"] as? String ?? "") ?? 0
    }

    /// What `etcdctl del` does.
    func delete(_ key: String) throws {
        _ = try call("kv/deleterange", ["key": Data(key.utf8).base64EncodedString()])
    }

    /// What `etcdctl compaction --physical` does: forgets every revision before `revision`.
    func compact(upTo revision: Int64) throws {
        let answer = try call("kv/compaction", ["revision": String(revision), "physical": true])
        guard answer["header"] != nil else { throw EtcdTestError(description: "the compaction failed: \(answer)") }
    }

    /// What `etcdctl get` shows: the raw value of `key`.
    func get(_ key: String) throws -> String? {
        let answer = try call("kv/range", ["key": Data(key.utf8).base64EncodedString()])
        guard let kv = (answer["kvs"] as? [[String: Any]])?.first, let value = kv["value"] as? String,
            let data = Data(base64Encoded: value)
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The root user's password once ``enableAuthentication(rootPassword:)`` has run: every call then
    /// authenticates first.
    private var rootPassword: String?

    /// Adds the root user and turns authentication on, as `etcdctl user add root`, `auth enable` do.
    func enableAuthentication(rootPassword: String) throws {
        _ = try call("auth/user/add", ["name": "root", "password": rootPassword])
        _ = try call("auth/role/add", ["name": "root"])
        _ = try call("auth/user/grant", ["user": "root", "role": "root"])
        _ = try call("auth/enable", [:])
        self.rootPassword = rootPassword
    }

    func call(_ path: String, _ body: [String: Any], at endpoint: URL? = nil) throws -> [String: Any] {
        let endpoint = endpoint ?? members.first { $0.process != nil }?.clientURL ?? endpoints[0]
        var headers: [(name: String, value: String)] = []
        if let rootPassword {
            let answer = try post(["name": "root", "password": rootPassword], to: endpoint, "auth/authenticate")
            guard let token = answer["token"] as? String else {
                throw EtcdTestError(description: "no token for root: \(answer)")
            }
            headers.append(("Authorization", token))
        }
        return try post(body, to: endpoint, path, headers: headers)
    }

    private func post(
        _ body: [String: Any], to endpoint: URL, _ path: String, headers: [(name: String, value: String)] = []
    ) throws -> [String: Any] {
        // Not URLSession: on Linux it stops the process on etcd's error answers (see HTTPConnection).
        let answer = try HTTPConnection.post(
            endpoint, through: connector, path: "/v3/\(path)", body: try JSONSerialization.data(withJSONObject: body),
            headers: headers,
            until: Date().addingTimeInterval(10))
        return (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:]
    }

    /// A socket on 127.0.0.1 that listens and never accepts: a connection to it is made (the kernel queues
    /// it) and no byte ever comes back. Returns the descriptor, to close, and the port.
    static func silentListener() -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        listen(descriptor, 16)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func freePort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test that starts etcd members: skipped where the `etcd` binary is missing, saying how to install it.
    /// Under CI (``EtcdCluster/isRequired``) it runs all the same, and fails at its first ``EtcdCluster``, saying
    /// that etcd is missing.
    static var needsEtcd: Self { needsEtcd(and: nil) }

    /// For a test that needs etcd and another tool, `missing` saying why that tool cannot be used here (or `nil`):
    /// skipped, saying which is missing; under CI it runs all the same, and fails saying so.
    static func needsEtcd(and missing: String?) -> Self {
        let reason = EtcdCluster.unavailable ?? missing
        return .enabled(if: reason == nil || EtcdCluster.isRequired, Comment(rawValue: reason ?? "etcd is installed"))
    }
}

struct EtcdTestError: Error, CustomStringConvertible {
    let description: String
}

/// Every problem reported through `StorableConfig.errorHandler` while the tests run. Installed once, and
/// passing each report on to the handler it replaced: the test targets share one process and one handler, so
/// no test swaps it for a while (which would take reports away from tests running at the same time).
enum EtcdReports {
    private static let collected = Locked<[String]>([])
    private static let installed: Bool = {
        let previous = StorableConfig.errorHandler
        StorableConfig.errorHandler = { error in
            EtcdReports.collected.withLock { $0.append("\(error)") }
            previous(error)
        }
        return true
    }()

    /// Starts collecting; call before the code under test runs.
    static func install() {
        _ = installed
    }

    /// The reports so far that mention `text` (a key or a prefix unique to the test).
    static func mentioning(_ text: String) -> [String] {
        collected.withLock { $0.filter { $0.contains(text) } }
    }
}
