import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// A network namespace with a veth pair, made by the test and removed after it: "another host" at a private
/// address that only this machine's namespace answers, as root can make one (`ip netns add`).
final class NetworkNamespace {
    let name: String
    /// This side's address, and the namespace's (the other host's).
    let hostAddress: String
    let peerAddress: String
    private let hostInterface: String

    static var unavailable: String? {
        guard getuid() == 0 else { return "making a network namespace needs root" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else {
            return "ip is not installed: apt-get install -y iproute2"
        }
        return nil
    }

    init() throws {
        let tag = String(UInt32(getpid()) % 10_000) + String(Int.random(in: 10...99))
        name = "scfg\(tag)"
        hostInterface = "vh\(tag)"
        let subnet = Int.random(in: 1...250)
        hostAddress = "10.231.\(subnet).1"
        peerAddress = "10.231.\(subnet).2"
        let peerInterface = "vn\(tag)"
        try Self.ip(["netns", "add", name])
        do {
            try Self.ip(["link", "add", hostInterface, "type", "veth", "peer", "name", peerInterface])
            try Self.ip(["link", "set", peerInterface, "netns", name])
            try Self.ip(["addr", "add", "\(hostAddress)/30", "dev", hostInterface])
            try Self.ip(["link", "set", hostInterface, "up"])
            try Self.ip(["netns", "exec", name, "ip", "addr", "add", "\(peerAddress)/30", "dev", peerInterface])
            try Self.ip(["netns", "exec", name, "ip", "link", "set", peerInterface, "up"])
            try Self.ip(["netns", "exec", name, "ip", "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    deinit {
        remove()
    }

    private func remove() {
        // Deleting the namespace deletes the veth pair too; the link is deleted first in case it never moved.
        try? Self.ip(["link", "del", hostInterface])
        try? Self.ip(["netns", "del", name])
    }

    /// The command that runs a program inside the namespace.
    var launcher: [String] { ["/usr/sbin/ip", "netns", "exec", name] }

    private static func ip(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw EtcdTestError(
                description:
                    "ip \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}

/// EtcdStore against a member on another host: a real etcd in a network namespace of the test's own.
@Suite(.serialized)
struct EtcdRemoteHostTests {
    /// A namespace of the test's own. Without root or `ip` a test that asks for one is skipped by its trait
    /// (`.needsEtcd(and: NetworkNamespace.unavailable)`), except under CI, where this throws, saying why.
    static func namespace() throws -> NetworkNamespace {
        if let missing = NetworkNamespace.unavailable { throw EtcdTestError(description: missing) }
        return try NetworkNamespace()
    }

    /// The password would go in clear text over http:// to another host: refused, saying why and how to allow
    /// it; allowed on purpose, it works. The demo says the same.
    @Test(.needsEtcd(and: NetworkNamespace.unavailable))
    func aPasswordIsNotSentInClearTextToAnotherHostUnlessAllowed() throws {
        let namespace = try Self.namespace()
        let cluster = try EtcdCluster(host: namespace.peerAddress, launcher: namespace.launcher)
        try cluster.enableAuthentication(rootPassword: "remote-secret")
        let credentials = EtcdStore.Credentials(user: "root", password: "remote-secret")
        #expect {
            try EtcdStore(endpoints: cluster.endpoints, prefix: "remote/", credentials: credentials)
        } throws: { error in
            "\(error)".contains("clear text") && "\(error)".contains("allowingPasswordOverPlainHTTP")
                && "\(error)".contains(namespace.peerAddress)
        }
        let allowed = try EtcdStore(
            endpoints: cluster.endpoints, prefix: "remote/", credentials: credentials,
            allowingPasswordOverPlainHTTP: true)
        #expect(allowed.isConnected, "\(allowed.connectionProblem ?? "")")
        Limits(store: allowed).maxUploadMB = 42
        #expect(try cluster.get("remote/etcd.Limits.maxUploadMB") == "42")

        let address = "etcd://\(namespace.peerAddress):\(cluster.members[0].clientPort)/remote/"
        let login = ["STORABLE_CONFIG_ETCD_USER": "root", "STORABLE_CONFIG_ETCD_PASSWORD": "remote-secret"]
        let refused = try EtcdStoreTests.runDemo(["--store", address, "list"], environment: login)
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("STORABLE_CONFIG_ETCD_ALLOW_PLAIN_PASSWORD=1"), "\(refused.errorOutput)")
        let sent = try EtcdStoreTests.runDemo(
            ["--store", address, "get", "app.userName"],
            environment: login.merging(["STORABLE_CONFIG_ETCD_ALLOW_PLAIN_PASSWORD": "1"]) { $1 })
        #expect(sent.status == 0, "\(sent.errorOutput)")
    }

    /// A member whose certificate names another host (127.0.0.1 and localhost, reached at the namespace's
    /// address) is refused, naming the endpoint and the cause.
    @Test(.needsEtcd(and: TestCertificates.unavailable ?? NetworkNamespace.unavailable))
    func aCertificateForAnotherHostIsRefused() throws {
        let certificates = try EtcdTLSTests.certificates()
        let namespace = try Self.namespace()
        let setup = EtcdCluster.TLSSetup(certificates)
        // The tests' own health check would refuse the certificate too: wait for the port instead.
        let cluster = try EtcdCluster(
            tls: setup, host: namespace.peerAddress, launcher: namespace.launcher, waitingUntilHealthy: false)
        var store: EtcdStore?
        try waitFor(every: 0.3, failure: "the last problem: \(store?.connectionProblem ?? "none")") {
            store = try EtcdStore(
                endpoints: cluster.endpoints, prefix: "remote-tls-\(UUID().uuidString.prefix(4))/",
                tls: setup.clientTLS, timeout: 2)
            return store?.connectionProblem?.contains("mismatch") == true
        }
        let problem = store?.connectionProblem ?? ""
        #expect(problem.contains("IP address mismatch"), "\(problem)")
        #expect(problem.contains(cluster.endpoints[0].absoluteString))
    }
}
