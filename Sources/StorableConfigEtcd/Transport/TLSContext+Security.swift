#if canImport(Security) && !os(Linux)
    import Foundation
    import Security

    /// The Apple side of ``TLSContext``: the CA file's certificates as the trust anchors, and the client's identity
    /// from PKCS#12. By design, and not tested on the Linux machines where the package is built (Docs/Etcd.md,
    /// "Platforms").
    @available(watchOS, unavailable)
    extension TLSContext {
        /// The certificates of the PEM file `file`, for `SecTrustSetAnchorCertificates`.
        /// - Throws: ``TransportFailure`` naming the file: unreadable, not PEM, or a block the system does not take
        ///   as a certificate.
        static func anchorCertificates(in file: URL) throws -> [SecCertificate] {
            let blocks: [PEM.Block]
            do {
                blocks = try PEM.blocks(in: contents(of: file, "CA file"))
            } catch let problem as PEM.Problem {
                throw TransportFailure(description: "the CA file \(file.path) is not PEM (\(problem))")
            }
            let certificates = blocks.filter { $0.label == "CERTIFICATE" }
            guard !certificates.isEmpty else {
                throw TransportFailure(description: "the CA file \(file.path) holds no CERTIFICATE block")
            }
            return try certificates.enumerated().map { index, block in
                guard let certificate = SecCertificateCreateWithData(nil, Data(block.bytes) as CFData) else {
                    throw TransportFailure(
                        description: "certificate \(index + 1) of the CA file \(file.path) is not an X.509 "
                            + "certificate the system can read")
                }
                return certificate
            }
        }

        /// The identity (certificate and private key) that the client shows.
        /// - Throws: ``TransportFailure``: PEM files, which the system cannot pair outside the keychain; an
        ///   unreadable PKCS#12 file, a wrong password, or one without an identity.
        static func identity(of client: ClientCertificate) throws -> SecIdentity {
            switch client {
            case .pem(let certificate, _):
                throw TransportFailure(
                    description: "on Apple platforms a client certificate is given as PKCS#12 (pkcs12File:), not as "
                        + "PEM files (\(certificate.path)): the system cannot pair a PEM key with its certificate "
                        + "outside the keychain. Make one with: openssl pkcs12 -export -legacy -in client.pem "
                        + "-inkey client-key.pem -out client.p12 (Docs/Etcd.md, \"TLS\")")
            case .pkcs12(let file, let password):
                let bytes = try contents(of: file, "PKCS#12 file")
                var items: CFArray?
                var options: [String: Any] = [kSecImportExportPassphrase as String: password]
                // Before these systems, macOS imports into the default keychain (Docs/Etcd.md, "Platforms").
                if #available(macOS 15, iOS 18, tvOS 18, visionOS 2, *) {
                    options[kSecImportToMemoryOnly as String] = true
                }
                let status = SecPKCS12Import(Data(bytes) as CFData, options as CFDictionary, &items)
                guard status == errSecSuccess else {
                    let reason =
                        status == errSecAuthFailed
                        ? "a wrong password, or a file the system cannot decrypt (from OpenSSL 3, export it with "
                            + "openssl pkcs12 -export -legacy)"
                        : (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
                    throw TransportFailure(description: "the PKCS#12 file \(file.path) cannot be opened: \(reason)")
                }
                guard let first = (items as? [[String: Any]])?.first,
                    let value = first[kSecImportItemIdentity as String],
                    CFGetTypeID(value as CFTypeRef) == SecIdentityGetTypeID()
                else {
                    throw TransportFailure(
                        description: "the PKCS#12 file \(file.path) holds no certificate with its key")
                }
                return value as! SecIdentity
            }
        }

        /// Whether `trust`, the chain a member showed, ends at an anchor (the CA file's, or the system's) and
        /// names `host`; if not, the system's words for why.
        func evaluate(_ trust: SecTrust, host: String) -> String? {
            _ = SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
            if let anchors {
                _ = SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                _ = SecTrustSetAnchorCertificatesOnly(trust, true)
            }
            var error: CFError?
            guard !SecTrustEvaluateWithError(trust, &error) else { return nil }
            return error.map { CFErrorCopyDescription($0) as String } ?? "the chain is not trusted"
        }
    }
#endif
