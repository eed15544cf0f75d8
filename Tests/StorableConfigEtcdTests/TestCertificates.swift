import Foundation

/// A CA, and certificates it signed, made with the `openssl` command-line tool (Debian's `openssl`) in a temporary
/// directory when a test asks for them: what an operator makes for etcd's TLS, with etcd's own flags.
final class TestCertificates: @unchecked Sendable {
    let directory: URL

    /// The CA's certificate: etcd's `--trusted-ca-file`, etcdctl's `--cacert`.
    var ca: URL { file("ca.pem") }
    /// The members' certificate and key, for 127.0.0.1 and localhost, for clients and peers alike.
    var server: (certificate: URL, key: URL) { (file("server.pem"), file("server-key.pem")) }
    /// A client certificate (CN root) and key: etcdctl's `--cert` and `--key`.
    var client: (certificate: URL, key: URL) { (file("client.pem"), file("client-key.pem")) }
    /// The client certificate and key as PKCS#12 (OpenSSL 3's default ciphers), with the CA as its chain, locked
    /// with ``pkcs12Password``: what Apple platforms take, and Linux too.
    var clientPKCS12: URL { file("client.p12") }
    /// The same with `openssl pkcs12 -legacy` (RC2 and 3DES, for older Apple systems); absent where this
    /// `openssl` cannot write one.
    var legacyClientPKCS12: URL { file("client-legacy.p12") }
    let pkcs12Password = "p12 pässword"
    /// The demo's environment for `etcds://` with the CA and the PEM client certificate and key.
    var demoEnvironment: [String: String] {
        [
            "STORABLE_CONFIG_ETCD_CACERT": ca.path,
            "STORABLE_CONFIG_ETCD_CERT": client.certificate.path,
            "STORABLE_CONFIG_ETCD_KEY": client.key.path,
        ]
    }
    /// A certificate for 127.0.0.1 that expired in 2020.
    var expired: (certificate: URL, key: URL) { (file("expired.pem"), file("expired-key.pem")) }
    /// A member's certificate with no subject alternative name, whose subject's CN is `localhost`: what OpenSSL
    /// would match against `localhost` by its CN fallback, and etcd's own clients refuse.
    var localhostInCNOnly: (certificate: URL, key: URL) { (file("cn-only.pem"), file("cn-only-key.pem")) }
    /// Another CA, which signed nothing the members show.
    var otherCA: URL { file("other-ca.pem") }

    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why these tests cannot run here (no `openssl`), or `nil`; a failure under CI.
    static var unavailable: String? {
        guard openssl == nil else { return nil }
        return "openssl is not installed: apt-get install -y openssl"
    }

    /// Made once per test process: each `openssl` run takes a few milliseconds, the whole set under a second.
    static let shared: Result<TestCertificates, EtcdTestError> = Result { try TestCertificates() }.mapError {
        EtcdTestError(description: "\($0)")
    }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try makeCA("ca", name: "StorableConfig test CA")
        try makeCA("other-ca", name: "Another CA")
        try sign(
            "server", name: "etcd member", alternativeNames: "IP:127.0.0.1,DNS:localhost",
            usage: "serverAuth,clientAuth")
        try sign("client", name: "root", alternativeNames: nil, usage: "clientAuth")
        try sign("cn-only", name: "localhost", alternativeNames: nil, usage: "serverAuth,clientAuth")
        try signExpired("expired", alternativeNames: "IP:127.0.0.1,DNS:localhost")
        let export = [
            "-in", "client.pem", "-inkey", "client-key.pem", "-certfile", "ca.pem", "-passout",
            "pass:\(pkcs12Password)",
        ]
        try run(["pkcs12", "-export"] + export + ["-out", "client.p12"])
        // OpenSSL 1.1's tool has no -legacy (its default is the legacy ciphers), and OpenSSL 3's needs its legacy
        // provider for it: the test of that bundle runs where it can be made.
        try? run(["pkcs12", "-export", "-legacy"] + export + ["-out", "client-legacy.p12"])
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    private func makeCA(_ base: String, name: String) throws {
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(base)-key.pem", "-out", "\(base).pem", "-days", "3", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    private func request(_ base: String, name: String) throws {
        try run([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(base)-key.pem", "-out", "\(base).csr", "-subj", "/CN=\(name)",
        ])
    }

    private func extensions(_ base: String, alternativeNames: String?, usage: String) throws {
        var text = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        text += "extendedKeyUsage=\(usage)\n"
        if let alternativeNames { text += "subjectAltName=\(alternativeNames)\n" }
        try text.write(to: file("\(base).ext"), atomically: true, encoding: .utf8)
    }

    private func sign(_ base: String, name: String, alternativeNames: String?, usage: String) throws {
        try request(base, name: name)
        try extensions(base, alternativeNames: alternativeNames, usage: usage)
        try run([
            "x509", "-req", "-in", "\(base).csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-out", "\(base).pem", "-days", "2", "-extfile", "\(base).ext",
        ])
    }

    /// `openssl ca` can date a certificate in the past, which `openssl x509` cannot.
    private func signExpired(_ base: String, alternativeNames: String) throws {
        try request(base, name: "expired member")
        try extensions(base, alternativeNames: alternativeNames, usage: "serverAuth,clientAuth")
        let configuration = """
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            serial = serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied
            """
        try configuration.write(to: file("ca.cnf"), atomically: true, encoding: .utf8)
        try "".write(to: file("index.txt"), atomically: true, encoding: .utf8)
        try "1000\n".write(to: file("serial"), atomically: true, encoding: .utf8)
        try run([
            "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca-key.pem", "-in", "\(base).csr",
            "-out", "\(base).pem", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
            "-extfile", "\(base).ext", "-notext",
        ])
    }

    private func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.openssl ?? "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw EtcdTestError(
                description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: "
                    + String(decoding: message, as: UTF8.self))
        }
    }
}
