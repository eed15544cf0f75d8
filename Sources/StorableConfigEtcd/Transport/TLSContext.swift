import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
#if canImport(Security) && !os(Linux)
    import Security
#endif

/// What a client trusts and shows for `https://` endpoints: the CA certificates that members' certificates must
/// chain to, and the client's own certificate and key, made once per store from an ``EtcdStore/TLS``.
///
/// On Linux, OpenSSL's `SSL_CTX`, from the `libssl` the system already has (``OpenSSL``,
/// `TLSContext+OpenSSL.swift`). On Apple platforms, the CA file's certificates and the client's identity for the
/// system's TLS (`TLSContext+Security.swift`, used by ``NetworkStream``). Either way: TLS 1.2 or later, the
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
    #elseif canImport(Security)
        /// The CA file's certificates, the only anchors a member's chain may end at; `nil` for the system's roots.
        let anchors: [SecCertificate]?
        /// The client's certificate and key, from its PKCS#12 file.
        let identity: SecIdentity?
    #endif

    /// The client certificate of a ``EtcdStore/TLS``, in one of the two forms it can take.
    enum ClientCertificate {
        case pem(certificate: URL, key: URL)
        case pkcs12(URL, password: String)

        /// The client certificate that `tls` gives, or `nil` for none.
        /// - Throws: ``TransportFailure`` for half of a PEM pair, or both forms at once.
        init?(_ tls: EtcdStore.TLS) throws {
            switch (tls.certificateFile, tls.keyFile, tls.pkcs12File) {
            case (nil, nil, nil):
                return nil
            case (let certificate?, let key?, nil):
                self = .pem(certificate: certificate, key: key)
            case (nil, nil, let bundle?):
                self = .pkcs12(bundle, password: tls.pkcs12Password)
            case (_, _, .some):
                throw TransportFailure(
                    description: "give the client certificate either as certificateFile and keyFile or as pkcs12File, "
                        + "not both")
            default:
                throw TransportFailure(
                    description: "a client certificate needs both certificateFile and keyFile (etcdctl's --cert and "
                        + "--key)")
            }
        }
    }

    /// Reads the files of `tls`.
    /// - Throws: ``TransportFailure`` naming the file that cannot be read or is not PEM (or PKCS#12), a key that
    ///   does not match its certificate, a wrong PKCS#12 password, or a system without TLS.
    init(_ tls: EtcdStore.TLS) throws {
        let client = try ClientCertificate(tls)
        hasClientCertificate = client != nil
        #if os(Linux)
            (library, context) = try Self.openSSLContext(caFile: tls.caFile, client: client)
        #elseif canImport(Security)
            anchors = try tls.caFile.map(Self.anchorCertificates(in:))
            identity = try client.map(Self.identity(of:))
        #else
            throw TransportFailure(description: "https:// endpoints need Linux's OpenSSL or Apple's Security")
        #endif
    }

    deinit {
        #if os(Linux)
            library.SSL_CTX_free(context)
        #endif
    }

    /// The largest CA, certificate, key or PKCS#12 file read: real ones are a few kilobytes.
    static let maximumFileSize = 1 << 20

    /// Throws, naming the file, unless it is a readable regular file (after symbolic links): a directory, a
    /// device or a FIFO, which would hold the reader until someone writes to it, is refused before it is opened.
    static func checkReadable(_ file: URL, _ what: String) throws {
        var info = stat()
        guard stat(file.path, &info) == 0 else {
            let cause = errno
            throw TransportFailure(
                description: cause == ENOENT
                    ? "the \(what) \(file.path) does not exist"
                    : "the \(what) \(file.path) cannot be read (\(String(cString: strerror(cause))))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw TransportFailure(description: "the \(what) \(file.path) cannot be read: it is not a regular file")
        }
        guard access(file.path, R_OK) == 0 else {
            throw TransportFailure(description: "the \(what) \(file.path) cannot be read")
        }
    }

    /// The bytes of `file`, which must be readable and at most ``maximumFileSize``.
    /// - Throws: ``TransportFailure`` naming the file and why.
    static func contents(of file: URL, _ what: String) throws -> [UInt8] {
        try checkReadable(file, what)
        // Opened without waiting, and checked again once open: a FIFO put in the file's place after the check
        // above does not hold the reader.
        let descriptor = open(file.path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw TransportFailure(
                description: "the \(what) \(file.path) cannot be read (\(String(cString: strerror(errno))))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw TransportFailure(description: "the \(what) \(file.path) cannot be read: it is not a regular file")
        }
        do {
            let data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
            guard data.count <= maximumFileSize else {
                throw TransportFailure(
                    description: "the \(what) \(file.path) is over \(maximumFileSize / 1024) KiB: not a \(what)")
            }
            return Array(data)
        } catch let failure as TransportFailure {
            throw failure
        } catch {
            throw TransportFailure(description: "the \(what) \(file.path) cannot be read (\(error))")
        }
    }
}
