#if os(Linux)
    import Foundation

    @available(watchOS, unavailable)
    extension TLSContext {
        /// OpenSSL's context for `caFile` and `client`: TLS 1.2 or later, members verified.
        /// - Throws: ``TransportFailure`` naming the file that cannot be used, and why.
        static func openSSLContext(caFile: URL?, client: ClientCertificate?) throws -> (OpenSSL, OpaquePointer) {
            let library = try OpenSSL.shared.get()
            guard let method = library.TLS_client_method(), let context = library.SSL_CTX_new(method) else {
                throw TransportFailure(description: "OpenSSL could not make a TLS context: \(library.lastError())")
            }
            do {
                try configure(context, library, caFile: caFile, client: client)
            } catch {
                library.SSL_CTX_free(context)
                throw error
            }
            return (library, context)
        }

        private static func configure(
            _ context: OpaquePointer, _ library: OpenSSL, caFile: URL?, client: ClientCertificate?
        ) throws {
            _ = library.SSL_CTX_ctrl(context, OpenSSL.setMinimumProtocolVersion, OpenSSL.tls12, nil)
            library.SSL_CTX_set_verify(context, OpenSSL.verifyPeer, nil)
            if let caFile {
                try checkReadable(caFile, "CA file")
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
            switch client {
            case nil:
                return
            case .pem(let certificate, let key):
                try checkReadable(certificate, "certificate file")
                try checkReadable(key, "key file")
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
            case .pkcs12(let file, let password):
                try usePKCS12(file, password: password, in: context, library)
            }
        }

        /// Takes the client's certificate, key and intermediates from the PKCS#12 file.
        private static func usePKCS12(_ file: URL, password: String, in context: OpaquePointer, _ library: OpenSSL)
            throws
        {
            let bytes = try contents(of: file, "PKCS#12 file")
            library.ERR_clear_error()
            let bundle: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                return library.d2i_PKCS12(nil, &cursor, buffer.count)
            }
            guard let bundle else {
                throw TransportFailure(
                    description: "the PKCS#12 file \(file.path) is not PKCS#12 (\(library.lastError()))")
            }
            defer { library.PKCS12_free(bundle) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var chain: OpaquePointer?
            defer {
                library.EVP_PKEY_free(key)
                library.X509_free(certificate)
                if let chain {
                    for index in 0..<max(0, library.OPENSSL_sk_num(chain)) {
                        library.X509_free(library.OPENSSL_sk_value(chain, index))
                    }
                    library.OPENSSL_sk_free(chain)
                }
            }
            guard library.PKCS12_parse(bundle, password, &key, &certificate, &chain) == 1 else {
                let detail = library.lastError()
                let reason =
                    detail.contains("mac verify failure")
                    ? "a wrong password"
                    : detail.contains("unsupported")
                        ? "its cipher is one this OpenSSL does not take (OpenSSL 3 reads the ciphers of "
                            + "openssl pkcs12 -legacy only with its legacy provider, which the store does not load)"
                        : "a wrong password, or a cipher this OpenSSL does not take"
                throw TransportFailure(
                    description: "the PKCS#12 file \(file.path) cannot be opened: \(reason) (\(detail))")
            }
            guard let key, let certificate else {
                throw TransportFailure(description: "the PKCS#12 file \(file.path) holds no certificate with its key")
            }
            guard library.SSL_CTX_use_certificate(context, certificate) == 1,
                library.SSL_CTX_use_PrivateKey(context, key) == 1, library.SSL_CTX_check_private_key(context) == 1
            else {
                throw TransportFailure(
                    description: "the certificate and key in the PKCS#12 file \(file.path) cannot be used "
                        + "(\(library.lastError()))")
            }
            if let chain {
                for index in 0..<max(0, library.OPENSSL_sk_num(chain)) {
                    // SSL_CTX_add1_chain_cert takes its own reference; ours is freed above.
                    let intermediate = library.OPENSSL_sk_value(chain, index)
                    guard
                        library.SSL_CTX_ctrl(
                            context, OpenSSL.addChainCertificate, 1, UnsafeMutableRawPointer(intermediate)) == 1
                    else {
                        throw TransportFailure(
                            description: "an intermediate certificate in the PKCS#12 file \(file.path) cannot be "
                                + "used (\(library.lastError()))")
                    }
                }
            }
        }
    }

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
