import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

/// A client certificate given as one PKCS#12 file (`EtcdStore.TLS(pkcs12File:)`), the form Apple's systems take,
/// against a real etcd member started with `--client-cert-auth`: on Linux, OpenSSL reads it.
@Suite(.serialized)
struct EtcdPKCS12Tests {
    @Test(.needsEtcd(and: TestCertificates.unavailable), arguments: ["OpenSSL 3's default", "-legacy"])
    func aClientCertificateFromPKCS12IsAcceptedWhereTheMemberRequiresOne(form: String) throws {
        let certificates = try EtcdTLSTests.certificates()
        let cluster = try EtcdCluster(tls: EtcdCluster.TLSSetup(certificates))
        let file = form == "-legacy" ? certificates.legacyClientPKCS12 : certificates.clientPKCS12
        // Where this openssl cannot write a -legacy bundle, there is none to read.
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        let tls = EtcdStore.TLS(caFile: certificates.ca, pkcs12File: file, pkcs12Password: certificates.pkcs12Password)
        do {
            let store = try EtcdStore(endpoints: cluster.endpoints, prefix: "p12/", tls: tls, timeout: 3)
            #expect(store.isConnected, "\(store.connectionProblem ?? "")")
            let limits = Limits(store: store)
            limits.maxUploadMB = 64
            #expect(try cluster.get("p12/etcd.Limits.maxUploadMB") == "64")
        } catch {
            // OpenSSL 3 reads RC2, the cipher of -legacy bundles, only with its legacy provider loaded (OpenSSL 1.1
            // reads them, and takes the branch above): an error naming the file and the cipher, never a crash.
            #expect(form == "-legacy")
            #expect(
                "\(error)".contains(file.path) && "\(error)".contains("its cipher is one this OpenSSL does not take")
                    && "\(error)".contains("(unsupported)") && !"\(error)".contains("wrong password"), "\(error)")
        }
    }

    @Test(
        .needsEtcd(and: TestCertificates.unavailable),
        arguments: ["a wrong password", "not PKCS#12", "both forms", "a directory"])
    func aPKCS12FileThatCannotBeUsedIsNamedWithTheCause(problem: String) throws {
        let certificates = try EtcdTLSTests.certificates()
        var tls = EtcdStore.TLS(
            caFile: certificates.ca, pkcs12File: certificates.clientPKCS12,
            pkcs12Password: certificates.pkcs12Password)
        let expected: [String]
        switch problem {
        case "a wrong password":
            tls.pkcs12Password = "not it"
            expected = [certificates.clientPKCS12.path, "cannot be opened: a wrong password (mac verify failure)"]
        case "not PKCS#12":
            tls.pkcs12File = certificates.client.certificate
            expected = [certificates.client.certificate.path, "is not PKCS#12"]
        case "both forms":
            tls.certificateFile = certificates.client.certificate
            tls.keyFile = certificates.client.key
            expected = ["either as certificateFile and keyFile or as pkcs12File"]
        default:
            tls.pkcs12File = certificates.directory
            expected = [certificates.directory.path, "cannot be read"]
        }
        let started = ContinuousClock.now
        #expect {
            try EtcdStore(
                endpoints: [URL(string: "https://127.0.0.1:\(EtcdCluster.freePort())")!], prefix: "p12-bad/", tls: tls)
        } throws: { error in
            expected.allSatisfy { "\(error)".contains($0) }
        }
        // Within the documented bound (one endpoint, one `timeout`: 5 s by default), with a margin of two.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// A FIFO in place of a file would hold the store's creation until someone writes to it; a link to a real
    /// file is followed.
    @Test(.needsEtcd(and: TestCertificates.unavailable), arguments: ["caFile", "pkcs12File"])
    func aFIFOInPlaceOfAFileIsRefusedAtOnceAndALinkIsFollowed(field: String) throws {
        let certificates = try EtcdTLSTests.certificates()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(
            at: link, withDestinationURL: field == "caFile" ? certificates.ca : certificates.clientPKCS12)
        var tls = EtcdStore.TLS(
            caFile: certificates.ca, pkcs12File: certificates.clientPKCS12,
            pkcs12Password: certificates.pkcs12Password)
        let endpoint = URL(string: "https://127.0.0.1:\(EtcdCluster.freePort())")!
        if field == "caFile" { tls.caFile = fifo } else { tls.pkcs12File = fifo }
        let started = ContinuousClock.now
        #expect {
            try EtcdStore(endpoints: [endpoint], prefix: "fifo/", tls: tls, timeout: 1)
        } throws: { error in
            "\(error)".contains("\(fifo.path) cannot be read: it is not a regular file")
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        if field == "caFile" { tls.caFile = link } else { tls.pkcs12File = link }
        // Through the link the files are read; the store is made, and finds no member.
        let store = try EtcdStore(endpoints: [endpoint], prefix: "link/", tls: tls, timeout: 1)
        #expect(!store.isConnected)
        #expect(!(store.connectionProblem ?? "").contains("regular file"))
    }

    /// Stores of one endpoint and prefix share a connection only if their TLS is the same: a store with a wrong
    /// PKCS#12 password, another bundle, or none, is never handed the connection a good one made.
    @Test(.needsEtcd(and: TestCertificates.unavailable))
    func storesWithAnotherClientCertificateOrPasswordDoNotShareAConnection() throws {
        let certificates = try EtcdTLSTests.certificates()
        let endpoints = [URL(string: "https://127.0.0.1:\(EtcdCluster.freePort())")!]
        let good = EtcdStore.TLS(
            caFile: certificates.ca, pkcs12File: certificates.clientPKCS12,
            pkcs12Password: certificates.pkcs12Password)
        let first = try EtcdStore(endpoints: endpoints, prefix: "shared/", tls: good, timeout: 1)
        var wrongPassword = good
        wrongPassword.pkcs12Password = "not it"
        #expect {
            try EtcdStore(endpoints: endpoints, prefix: "shared/", tls: wrongPassword, timeout: 1)
        } throws: { error in
            "\(error)".contains("wrong password")
        }
        let pem = EtcdStore.TLS(
            caFile: certificates.ca, certificateFile: certificates.client.certificate, keyFile: certificates.client.key)
        let second = try EtcdStore(endpoints: endpoints, prefix: "shared/", tls: pem, timeout: 1)
        let third = try EtcdStore(endpoints: endpoints, prefix: "shared/", tls: good, timeout: 1)
        #expect(second.storage !== first.storage)
        #expect(third.storage === first.storage)
    }

    @Test func theTLSDescriptionNamesTheFilesAndNeverThePassword() throws {
        let tls = EtcdStore.TLS(
            caFile: URL(fileURLWithPath: "/etc/etcd/ca.pem"), pkcs12File: URL(fileURLWithPath: "/etc/etcd/client.p12"),
            pkcs12Password: "hunter2")
        #expect("\(tls)" == "TLS(caFile: /etc/etcd/ca.pem, pkcs12File: /etc/etcd/client.p12)")
        #expect(!String(reflecting: tls).contains("hunter2"))
    }

    /// `STORABLE_CONFIG_ETCD_PKCS12` and `_PKCS12_PASSWORD` give the demo its client certificate.
    @Test(.needsEtcd(and: TestCertificates.unavailable))
    func theDemoTakesAPKCS12ClientCertificateFromTheEnvironment() throws {
        let certificates = try EtcdTLSTests.certificates()
        let cluster = try EtcdCluster(tls: EtcdCluster.TLSSetup(certificates))
        let address = "etcds://127.0.0.1:\(cluster.members[0].clientPort)/demo-p12/"
        var environment = [
            "STORABLE_CONFIG_ETCD_CACERT": certificates.ca.path,
            "STORABLE_CONFIG_ETCD_PKCS12": certificates.clientPKCS12.path,
            "STORABLE_CONFIG_ETCD_PKCS12_PASSWORD": certificates.pkcs12Password,
        ]
        let set = try EtcdStoreTests.runDemo(
            ["--store", address, "set", "app.userName", "p12"], environment: environment)
        #expect(set.status == 0, "\(set.errorOutput)")
        #expect(try cluster.get("/demo-p12/storable-config-demo.AppConfig.userName") == #""p12""#)
        environment["STORABLE_CONFIG_ETCD_PKCS12_PASSWORD"] = "wrong"
        let refused = try EtcdStoreTests.runDemo(["--store", address, "get", "app.userName"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("wrong password"), "\(refused.errorOutput)")
        #expect(!refused.errorOutput.contains("wrong\n"))
    }
}
