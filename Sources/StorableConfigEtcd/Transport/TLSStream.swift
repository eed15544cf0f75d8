#if os(Linux)
    import Foundation
    import Glibc

    /// TLS over a ``SocketStream``, with OpenSSL driven over the non-blocking socket: every wait is the socket's
    /// `poll`, bounded by the caller's deadline, so a member that stalls the handshake or an answer holds no
    /// thread past it.
    final class TLSStream: ByteStream {
        private let socket: SocketStream
        private let context: TLSContext
        private let ssl: OpaquePointer
        private var library: OpenSSL { context.library }

        /// Shakes hands with the member at the other end of `socket`, before `deadline`, checking that its
        /// certificate chains to the context's CAs and names `host` (a DNS name or an IP address).
        /// - Throws: ``TransportFailure`` with the cause: the certificate's problem as OpenSSL's verifier words it
        ///   ("certificate has expired", "unable to get local issuer certificate", "hostname mismatch"), or the
        ///   alert the member sent (a missing client certificate).
        init(over socket: SocketStream, context: TLSContext, host: String, before deadline: ContinuousClock.Instant)
            throws
        {
            self.socket = socket
            self.context = context
            let library = context.library
            guard let ssl = library.SSL_new(context.context) else {
                throw TransportFailure(description: "OpenSSL could not make a TLS session: \(library.lastError())")
            }
            self.ssl = ssl
            _ = library.SSL_set_fd(ssl, socket.descriptor)
            let parameters = library.SSL_get0_param(ssl)
            library.X509_VERIFY_PARAM_set_hostflags(parameters, OpenSSL.neverCheckSubject)
            if Self.isIPAddress(host) {
                _ = library.X509_VERIFY_PARAM_set1_ip_asc(parameters, host)
            } else {
                _ = library.X509_VERIFY_PARAM_set1_host(parameters, host, 0)
                _ = host.withCString { name in
                    library.SSL_ctrl(
                        ssl, OpenSSL.setHostName, OpenSSL.hostNameType, UnsafeMutableRawPointer(mutating: name))
                }
            }
            while true {
                library.ERR_clear_error()
                let result = Self.withoutSIGPIPE { library.SSL_connect(ssl) }
                if result == 1 { break }
                try wait(after: result, before: deadline, "the TLS handshake")
            }
        }

        deinit {
            library.SSL_free(ssl)
        }

        /// Runs `body` (an OpenSSL call that may write to the socket) with SIGPIPE blocked on this thread, and
        /// takes back a SIGPIPE that it raised: OpenSSL writes without `MSG_NOSIGNAL`, and a member that closed
        /// the connection would otherwise end the process. The process's own handling of SIGPIPE is not touched.
        static func withoutSIGPIPE<Result>(_ body: () -> Result) -> Result {
            var pipe = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &pipe, &previous)
            var pendingBefore = sigset_t()
            sigpending(&pendingBefore)
            let wasPending = sigismember(&pendingBefore, SIGPIPE) == 1
            let result = body()
            if !wasPending {
                var pendingAfter = sigset_t()
                sigpending(&pendingAfter)
                if sigismember(&pendingAfter, SIGPIPE) == 1 {
                    var none = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipe, nil, &none)
                }
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            return result
        }

        private static func isIPAddress(_ host: String) -> Bool {
            var v4 = in_addr()
            var v6 = in6_addr()
            return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
        }

        /// After a call that returned `result`: waits for the socket when OpenSSL wants to read or write, or
        /// throws why the call failed.
        private func wait(after result: Int32, before deadline: ContinuousClock.Instant, _ what: String) throws {
            let error = library.SSL_get_error(ssl, result)
            switch error {
            case OpenSSL.errorWantRead:
                try socket.wait(for: Int16(POLLIN), before: deadline, "in \(what)")
            case OpenSSL.errorWantWrite:
                try socket.wait(for: Int16(POLLOUT), before: deadline, "in \(what)")
            default:
                throw TransportFailure(description: "\(what) failed: \(cause(of: error))")
            }
        }

        private func cause(of error: Int32) -> String {
            let verification = library.SSL_get_verify_result(ssl)
            if verification != OpenSSL.verifyOK, let text = library.X509_verify_cert_error_string(verification) {
                return "the member's certificate was refused: \(String(cString: text))"
            }
            let detail = library.lastError()
            if error == OpenSSL.errorSyscall && detail == "no detail" {
                return "the member closed the connection"
            }
            if !context.hasClientCertificate
                && (detail.contains("alert bad certificate") || detail.contains("certificate required"))
            {
                return "\(detail): the member asks for a client certificate (--client-cert-auth): give certificateFile "
                    + "and keyFile, or pkcs12File"
            }
            return detail
        }

        func write(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws {
            var sent = 0
            while sent < bytes.count {
                library.ERR_clear_error()
                let count = bytes[sent...].withUnsafeBytes { buffer in
                    Self.withoutSIGPIPE { library.SSL_write(ssl, buffer.baseAddress, Int32(clamping: buffer.count)) }
                }
                if count > 0 {
                    sent += Int(count)
                    continue
                }
                try wait(after: count, before: deadline, "sending the request")
            }
        }

        func read(atMost maximum: Int, before deadline: ContinuousClock.Instant) throws -> [UInt8] {
            var chunk = [UInt8](repeating: 0, count: max(1, min(maximum, 65_536)))
            while true {
                library.ERR_clear_error()
                let count = chunk.withUnsafeMutableBytes { buffer in
                    Self.withoutSIGPIPE { library.SSL_read(ssl, buffer.baseAddress, Int32(buffer.count)) }
                }
                if count > 0 {
                    chunk.removeSubrange(Int(count)...)
                    return chunk
                }
                let error = library.SSL_get_error(ssl, count)
                // The member closed the stream, with TLS's close_notify or without it.
                if error == OpenSSL.errorZeroReturn { return [] }
                if error == OpenSSL.errorSyscall && library.ERR_get_error() == 0 { return [] }
                try wait(after: count, before: deadline, "waiting for the answer")
            }
        }

        var isReusable: Bool {
            guard library.SSL_pending(ssl) == 0 else { return false }
            if socket.isReusable { return true }
            // Bytes wait on the socket: a TLS 1.3 member sends its session tickets after the handshake, which
            // are no answer. Read what is there without waiting: a byte of data, the end of the stream or an
            // error means the connection must not carry another request.
            var byte: UInt8 = 0
            library.ERR_clear_error()
            let count = Self.withoutSIGPIPE { library.SSL_read(ssl, &byte, 1) }
            guard count <= 0, library.SSL_get_error(ssl, count) == OpenSSL.errorWantRead else { return false }
            return socket.isReusable
        }

        func shutdownNow() {
            socket.shutdownNow()
        }
    }
#endif
