import Foundation
import Testing

@testable import StorableConfigEtcd

/// The PEM reader that gives Apple's Security framework the CA file's certificates (DER), checked on Linux
/// against what `openssl` writes and against text that is not PEM.
struct PEMTests {
    /// The DER of `pem` as `openssl x509 -outform DER` gives it.
    private func der(of pem: URL) throws -> [UInt8] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("der-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestCertificates.openssl ?? "/usr/bin/openssl")
        process.arguments = ["x509", "-in", pem.path, "-outform", "DER", "-out", output.path]
        try process.run()
        process.waitUntilExit()
        return try Array(Data(contentsOf: output))
    }

    @Test(.needsEtcd(and: TestCertificates.unavailable))
    func aCAFileThatOpenSSLWroteGivesTheCertificatesOpenSSLReads() throws {
        let certificates = try EtcdTLSTests.certificates()
        let ca = try Data(contentsOf: certificates.ca)
        let other = try Data(contentsOf: certificates.otherCA)
        // A bundle of two, with the explanatory text `openssl x509 -text` puts before each, and CRLF line ends.
        let text =
            "Certificate:\n    Data: ...\n" + String(decoding: ca, as: UTF8.self) + "\nsubject=CN = Another CA\n"
            + String(decoding: other, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n")
        let blocks = try PEM.blocks(in: Array(text.utf8))
        #expect(blocks.map(\.label) == ["CERTIFICATE", "CERTIFICATE"])
        #expect(blocks[0].bytes == (try der(of: certificates.ca)))
        #expect(blocks[1].bytes == (try der(of: certificates.otherCA)))
        #expect((try PEM.blocks(in: Array(PEM.text(of: blocks).utf8))) == blocks)
    }

    @Test(arguments: [
        ("", "line 1: no -----BEGIN"),
        ("just some text\n", "line 2: no -----BEGIN"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n", "line 1: the CERTIFICATE block begun here has no END line"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----\n", "line 3: END PRIVATE KEY closes"),
        ("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n", "line 1: the CERTIFICATE block"),
        ("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "is not base64 (or is empty)"),
        ("-----END CERTIFICATE-----\n", "line 1: an END CERTIFICATE with no BEGIN"),
        ("-----BEGIN A-----\n-----BEGIN B-----\n", "line 2: a BEGIN inside the A block begun on line 1"),
    ])
    func textThatIsNotPEMIsRefusedNamingTheLine(text: String, expected: String) {
        #expect {
            try PEM.blocks(in: Array(text.utf8))
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    /// What a hostile or broken file holds: no crash, no hang, and nothing taken that is not a whole block.
    @Test func hostileTextIsRefusedOrReadExactly() throws {
        let body = Data((0..<3000).map { UInt8($0 % 251) }).base64EncodedString()
        let hostile: [(String, [UInt8]?)] = [
            // One line of 4 MiB: read, as base64 without line breaks is still base64.
            (
                "-----BEGIN HUGE-----\n" + String(repeating: "QUFB", count: 1 << 20) + "\n-----END HUGE-----\n",
                Array(repeating: 65, count: 3 << 20)
            ),
            // Odd Unicode and NUL around a block: ignored as explanatory text.
            (
                "\u{FEFF}é\u{0}\u{202E}\n-----BEGIN X-----\n\(body)\n-----END X-----\n\u{1F600}",
                Array((0..<3000).map { UInt8($0 % 251) })
            ),
            // Unicode inside the base64: not base64.
            ("-----BEGIN X-----\nQUFB\u{00A0}QUFB\n-----END X-----\n", nil),
            // A label too long to be one: not a BEGIN line, so no block.
            (
                "-----BEGIN \(String(repeating: "L", count: 65))-----\nQUFB\n-----END \(String(repeating: "L", count: 65))-----\n",
                nil
            ),
            // Ten thousand BEGINs with no END.
            (String(repeating: "-----BEGIN X-----\n", count: 10_000), nil),
        ]
        for (text, expected) in hostile {
            let blocks = try? PEM.blocks(in: Array(text.utf8))
            #expect(blocks?.first?.bytes == expected, "\(text.prefix(40))")
        }
    }
}
