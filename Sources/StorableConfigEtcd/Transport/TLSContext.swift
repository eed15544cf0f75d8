import Foundation

/// What a client trusts and shows for `https://` endpoints: the CA certificates that members' certificates must
/// chain to, and the client's own certificate and key, made once per store from an ``EtcdStore/TLS``.
///
/// On Linux, OpenSSL's `SSL_CTX`, from the `libssl` the system already has (``OpenSSL``): TLS 1.2 or later, the
/// member's certificate verified against the CA file (or the system's roots) and against the endpoint's host name
/// or IP address.
@available(watchOS, unavailable)
final class TLSContext: @unchecked Sendable {
    /// Whether the client shows a certificate of its own.
    let hasClientCertificate: Bool

    #if os(Linux)
        let library: OpenSSL
        /// Set up once in `init` and only read after that: OpenSSL allows `SSL_new` from many threads.
        let context: OpaquePointer
    #endif

    /// Reads the files of `tls`.
    /// - Throws: ``TransportFailure`` naming the file that cannot be read or is not PEM, a key that does not
    ///   match its certificate, or a system without OpenSSL.
    init(_ tls: EtcdStore.TLS) throws {
        hasClientCertificate = tls.certificateFile != nil
        #if os(Linux)
            library = try OpenSSL.shared.get()
            guard let method = library.TLS_client_method(), let context = library.SSL_CTX_new(method) else {
                throw TransportFailure(description: "OpenSSL could not make a TLS context: \(library.lastError())")
            }
            self.context = context
            _ = library.SSL_CTX_ctrl(context, OpenSSL.setMinimumProtocolVersion, OpenSSL.tls12, nil)
            library.SSL_CTX_set_verify(context, OpenSSL.verifyPeer, nil)
            if let caFile = tls.caFile {
                try Self.checkReadable(caFile, "CA file")
                guard library.SSL_CTX_load_verify_locations(context, caFile.path, nil) == 1 else {
                    throw TransportFailure(
                        description: "the CA file \(caFile.path) holds no PEM certificate OpenSSL can read "
                            + "(\(library.lastError()))")
                }
            } else if library.SSL_CTX_set_default_verify_paths(context) != 1 {
                throw TransportFailure(
                    description: "the system's CA certificates cannot be loaded (\(library.lastError())); give a caFile"
                )
            }
            switch (tls.certificateFile, tls.keyFile) {
            case (nil, nil):
                break
            case (let certificate?, let key?):
                try Self.checkReadable(certificate, "certificate file")
                try Self.checkReadable(key, "key file")
                guard library.SSL_CTX_use_certificate_chain_file(context, certificate.path) == 1 else {
                    throw TransportFailure(
                        description: "the certificate file \(certificate.path) holds no PEM certificate OpenSSL can "
                            + "read (\(library.lastError()))")
                }
                guard library.SSL_CTX_use_PrivateKey_file(context, key.path, OpenSSL.filetypePEM) == 1 else {
                    throw TransportFailure(
                        description: "the key file \(key.path) holds no PEM private key OpenSSL can read "
                            + "(\(library.lastError()))")
                }
                guard library.SSL_CTX_check_private_key(context) == 1 else {
                    throw TransportFailure(
                        description: "the key in \(key.path) does not belong to the certificate in "
                            + "\(certificate.path) (\(library.lastError()))")
                }
            default:
                throw TransportFailure(
                    description: "a client certificate needs both certificateFile and keyFile (etcdctl's --cert and "
                        + "--key)")
            }
        #else
            throw TransportFailure(
                description: "https:// endpoints are supported on Linux only so far (Docs/Etcd.md, \"TLS\")")
        #endif
    }

    deinit {
        #if os(Linux)
            library.SSL_CTX_free(context)
        #endif
    }

    /// Throws, naming the file, unless it is a readable regular file.
    private static func checkReadable(_ file: URL, _ what: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory) else {
            throw TransportFailure(description: "the \(what) \(file.path) does not exist")
        }
        guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: file.path) else {
            throw TransportFailure(description: "the \(what) \(file.path) cannot be read")
        }
    }
}

#if os(Linux)
    extension OpenSSL {
        /// OpenSSL's queued errors, oldest first, as text; the queue is emptied.
        func lastError() -> String {
            var messages: [String] = []
            while case let code = ERR_get_error(), code != 0 {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                // "error:0A000086:SSL routines::certificate verify failed": the words after the last colons.
                messages.append(
                    text.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? text)
            }
            return messages.isEmpty ? "no detail" : messages.joined(separator: "; ")
        }
    }
#endif
