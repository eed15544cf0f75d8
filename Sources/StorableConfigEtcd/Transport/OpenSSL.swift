#if os(Linux)
    import Foundation
    import Glibc

    /// The few functions of OpenSSL that TLS to etcd needs, found at run time in the `libssl` and `libcrypto` that
    /// every Swift-on-Linux install already loads for FoundationNetworking (its libcurl links OpenSSL 3).
    ///
    /// Loaded with `dlopen`, not linked: linking would need OpenSSL's `-dev` headers, which a machine with only the
    /// Swift toolchain does not have, and the package has no dependencies. Every function is declared here with
    /// its C signature from OpenSSL's manual pages; its pointers are opaque. See Docs/Etcd.md, "TLS".
    struct OpenSSL: @unchecked Sendable {
        typealias Pointer = OpaquePointer

        let TLS_client_method: @convention(c) () -> Pointer?
        let SSL_CTX_new: @convention(c) (Pointer?) -> Pointer?
        let SSL_CTX_free: @convention(c) (Pointer?) -> Void
        let SSL_CTX_ctrl: @convention(c) (Pointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
        let SSL_CTX_set_verify: @convention(c) (Pointer?, Int32, UnsafeRawPointer?) -> Void
        let SSL_CTX_load_verify_locations:
            @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
        let SSL_CTX_set_default_verify_paths: @convention(c) (Pointer?) -> Int32
        let SSL_CTX_use_certificate_chain_file: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
        let SSL_CTX_use_PrivateKey_file: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32) -> Int32
        let SSL_CTX_check_private_key: @convention(c) (Pointer?) -> Int32
        let SSL_new: @convention(c) (Pointer?) -> Pointer?
        let SSL_free: @convention(c) (Pointer?) -> Void
        let SSL_set_fd: @convention(c) (Pointer?, Int32) -> Int32
        let SSL_ctrl: @convention(c) (Pointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
        let SSL_get0_param: @convention(c) (Pointer?) -> Pointer?
        let X509_VERIFY_PARAM_set1_host: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int) -> Int32
        let X509_VERIFY_PARAM_set1_ip_asc: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
        let X509_VERIFY_PARAM_set_hostflags: @convention(c) (Pointer?, UInt32) -> Void
        let SSL_connect: @convention(c) (Pointer?) -> Int32
        let SSL_read: @convention(c) (Pointer?, UnsafeMutableRawPointer?, Int32) -> Int32
        let SSL_write: @convention(c) (Pointer?, UnsafeRawPointer?, Int32) -> Int32
        let SSL_pending: @convention(c) (Pointer?) -> Int32
        let SSL_get_error: @convention(c) (Pointer?, Int32) -> Int32
        let SSL_get_verify_result: @convention(c) (Pointer?) -> Int
        let X509_verify_cert_error_string: @convention(c) (Int) -> UnsafePointer<CChar>?
        let ERR_get_error: @convention(c) () -> UInt
        let ERR_error_string_n: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void
        let ERR_clear_error: @convention(c) () -> Void
        let d2i_PKCS12:
            @convention(c) (UnsafeMutablePointer<Pointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) ->
                Pointer?
        let PKCS12_parse:
            @convention(c) (
                Pointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<Pointer?>?, UnsafeMutablePointer<Pointer?>?,
                UnsafeMutablePointer<Pointer?>?
            ) -> Int32
        let PKCS12_free: @convention(c) (Pointer?) -> Void
        let SSL_CTX_use_certificate: @convention(c) (Pointer?, Pointer?) -> Int32
        let SSL_CTX_use_PrivateKey: @convention(c) (Pointer?, Pointer?) -> Int32
        let X509_free: @convention(c) (Pointer?) -> Void
        let EVP_PKEY_free: @convention(c) (Pointer?) -> Void
        let OPENSSL_sk_num: @convention(c) (Pointer?) -> Int32
        let OPENSSL_sk_value: @convention(c) (Pointer?, Int32) -> Pointer?
        let OPENSSL_sk_free: @convention(c) (Pointer?) -> Void
        let OPENSSL_init_crypto: @convention(c) (UInt64, Pointer?) -> Int32

        // Constants of OpenSSL's headers.
        /// X509_CHECK_FLAG_NEVER_CHECK_SUBJECT: a certificate names its host in a subject alternative name, never
        /// in its subject's CN alone (OpenSSL's fallback when there is no DNS name), as etcd's own clients require.
        static let neverCheckSubject: UInt32 = 0x20
        static let verifyPeer: Int32 = 1  // SSL_VERIFY_PEER
        static let filetypePEM: Int32 = 1  // SSL_FILETYPE_PEM
        static let setMinimumProtocolVersion: Int32 = 123  // SSL_CTRL_SET_MIN_PROTO_VERSION
        static let tls12: Int = 0x0303  // TLS1_2_VERSION
        static let setHostName: Int32 = 55  // SSL_CTRL_SET_TLSEXT_HOSTNAME
        static let hostNameType: Int = 0  // TLSEXT_NAMETYPE_host_name
        static let errorSSL: Int32 = 1, errorWantRead: Int32 = 2, errorWantWrite: Int32 = 3
        static let errorSyscall: Int32 = 5, errorZeroReturn: Int32 = 6
        static let verifyOK = 0  // X509_V_OK
        static let addChainCertificate: Int32 = 89  // SSL_CTRL_CHAIN_CERT, with 1: SSL_CTX_add1_chain_cert
        static let initNoAtExit: UInt64 = 0x0008_0000  // OPENSSL_INIT_NO_ATEXIT (OpenSSL 1.1.1b and later)

        /// The library, loaded once per process; or why it could not be.
        static let shared: Result<OpenSSL, TransportFailure> = load()

        private static func load() -> Result<OpenSSL, TransportFailure> {
            let libraries = [
                ("libssl.so.3", "libcrypto.so.3"), ("libssl.so.1.1", "libcrypto.so.1.1"), ("libssl.so", "libcrypto.so"),
            ]
            for (ssl, crypto) in libraries {
                guard let sslHandle = dlopen(ssl, RTLD_NOW | RTLD_LOCAL) else { continue }
                guard let cryptoHandle = dlopen(crypto, RTLD_NOW | RTLD_LOCAL) else {
                    dlclose(sslHandle)
                    continue
                }
                var addresses: [String: UnsafeMutableRawPointer] = [:]
                var missing: [String] = []
                for name in functionNames {
                    if let address = dlsym(sslHandle, name) ?? dlsym(cryptoHandle, name) {
                        addresses[name] = address
                    } else {
                        missing.append(name)
                    }
                }
                guard missing.isEmpty else {
                    return .failure(
                        TransportFailure(
                            description: "\(ssl) lacks functions that TLS needs: \(missing.joined(separator: ", "))"))
                }
                func function<Function>(_ name: String) -> Function {
                    unsafeBitCast(addresses[name]!, to: Function.self)
                }
                // The handles stay open for the life of the process, as the library is used for it.
                // OpenSSL frees its global state in an atexit handler, and a watch's thread that is in the middle
                // of a handshake when the program exits then takes a freed lock: the process ends with a SIGSEGV
                // instead of its exit status. Told first, OpenSSL registers no such handler (the process is ending;
                // its memory goes with it). If another part of the process initialised OpenSSL before this (libcurl,
                // through URLSession), the handler is already registered: see Docs/Etcd.md, "TLS".
                let library = OpenSSL(
                    TLS_client_method: function("TLS_client_method"),
                    SSL_CTX_new: function("SSL_CTX_new"),
                    SSL_CTX_free: function("SSL_CTX_free"),
                    SSL_CTX_ctrl: function("SSL_CTX_ctrl"),
                    SSL_CTX_set_verify: function("SSL_CTX_set_verify"),
                    SSL_CTX_load_verify_locations: function("SSL_CTX_load_verify_locations"),
                    SSL_CTX_set_default_verify_paths: function("SSL_CTX_set_default_verify_paths"),
                    SSL_CTX_use_certificate_chain_file: function("SSL_CTX_use_certificate_chain_file"),
                    SSL_CTX_use_PrivateKey_file: function("SSL_CTX_use_PrivateKey_file"),
                    SSL_CTX_check_private_key: function("SSL_CTX_check_private_key"),
                    SSL_new: function("SSL_new"),
                    SSL_free: function("SSL_free"),
                    SSL_set_fd: function("SSL_set_fd"),
                    SSL_ctrl: function("SSL_ctrl"),
                    SSL_get0_param: function("SSL_get0_param"),
                    X509_VERIFY_PARAM_set1_host: function("X509_VERIFY_PARAM_set1_host"),
                    X509_VERIFY_PARAM_set1_ip_asc: function("X509_VERIFY_PARAM_set1_ip_asc"),
                    X509_VERIFY_PARAM_set_hostflags: function("X509_VERIFY_PARAM_set_hostflags"),
                    SSL_connect: function("SSL_connect"),
                    SSL_read: function("SSL_read"),
                    SSL_write: function("SSL_write"),
                    SSL_pending: function("SSL_pending"),
                    SSL_get_error: function("SSL_get_error"),
                    SSL_get_verify_result: function("SSL_get_verify_result"),
                    X509_verify_cert_error_string: function("X509_verify_cert_error_string"),
                    ERR_get_error: function("ERR_get_error"),
                    ERR_error_string_n: function("ERR_error_string_n"),
                    ERR_clear_error: function("ERR_clear_error"),
                    d2i_PKCS12: function("d2i_PKCS12"),
                    PKCS12_parse: function("PKCS12_parse"),
                    PKCS12_free: function("PKCS12_free"),
                    SSL_CTX_use_certificate: function("SSL_CTX_use_certificate"),
                    SSL_CTX_use_PrivateKey: function("SSL_CTX_use_PrivateKey"),
                    X509_free: function("X509_free"),
                    EVP_PKEY_free: function("EVP_PKEY_free"),
                    OPENSSL_sk_num: function("OPENSSL_sk_num"),
                    OPENSSL_sk_value: function("OPENSSL_sk_value"),
                    OPENSSL_sk_free: function("OPENSSL_sk_free"),
                    OPENSSL_init_crypto: function("OPENSSL_init_crypto"))
                _ = library.OPENSSL_init_crypto(initNoAtExit, nil)
                return .success(library)
            }
            return .failure(
                TransportFailure(
                    description: "https:// needs OpenSSL's libssl (libssl.so.3 or libssl.so.1.1), which this system "
                        + "does not have"))
        }

        private static let functionNames = [
            "TLS_client_method", "SSL_CTX_new", "SSL_CTX_free", "SSL_CTX_ctrl", "SSL_CTX_set_verify",
            "SSL_CTX_load_verify_locations", "SSL_CTX_set_default_verify_paths", "SSL_CTX_use_certificate_chain_file",
            "SSL_CTX_use_PrivateKey_file", "SSL_CTX_check_private_key", "SSL_new", "SSL_free", "SSL_set_fd", "SSL_ctrl",
            "SSL_get0_param", "X509_VERIFY_PARAM_set1_host", "X509_VERIFY_PARAM_set1_ip_asc",
            "X509_VERIFY_PARAM_set_hostflags", "SSL_connect", "SSL_read", "SSL_write", "SSL_pending", "SSL_get_error",
            "SSL_get_verify_result", "X509_verify_cert_error_string",
            "ERR_get_error", "ERR_error_string_n", "ERR_clear_error", "d2i_PKCS12", "PKCS12_parse", "PKCS12_free",
            "SSL_CTX_use_certificate", "SSL_CTX_use_PrivateKey", "X509_free", "EVP_PKEY_free", "OPENSSL_sk_num",
            "OPENSSL_sk_value", "OPENSSL_sk_free", "OPENSSL_init_crypto",
        ]
    }
#endif
