#if canImport(Network)
    import Foundation
    import Network
    import Security
    import StorableConfig

    /// TLS to a member on Apple platforms: a Network.framework connection whose callbacks fill a buffer that
    /// ``read(atMost:before:)`` waits on, so that the stream keeps ``ByteStream``'s rule: no call outlives its
    /// deadline. One receive is outstanding at a time and is asked for only when the buffer is empty, so a member
    /// that sends without end fills at most one receive's worth.
    ///
    /// By design, and not tested on the Linux machines where the package is built (Docs/Etcd.md, "Platforms").
    @available(watchOS, unavailable)
    final class NetworkStream: ByteStream, @unchecked Sendable {
        private let connection: NWConnection
        private let endpoint: String
        private let hasClientCertificate: Bool
        private let verifier: Verifier
        /// Guards everything below, and is signalled when any of it changes.
        private let condition = NSCondition()
        private var isReady = false
        private var buffer: [UInt8] = []
        private var isReceiving = false
        private var peerClosed = false
        private var failure: String?

        /// The most one receive takes.
        private static let receiveSize = 65_536

        /// Connects to `host` and `port` and shakes hands, checking the member's certificate against `context`'s
        /// anchors and `host`, before `deadline`.
        /// - Throws: ``TransportFailure`` naming the endpoint and the cause.
        init(host: String, port: Int, context: TLSContext, before deadline: ContinuousClock.Instant) throws {
            endpoint = "\(host):\(port)"
            hasClientCertificate = context.hasClientCertificate
            let verifier = Verifier(context: context, host: host)
            self.verifier = verifier
            // The connection's callbacks and the verify block run here; the connection keeps it.
            let queue = DispatchQueue(label: "StorableConfigEtcd.NetworkStream")
            guard let raw = UInt16(exactly: port), raw != 0, let networkPort = NWEndpoint.Port(rawValue: raw) else {
                throw TransportFailure(description: "\(port) is not a port")
            }
            let tls = NWProtocolTLS.Options()
            let security = tls.securityProtocolOptions
            sec_protocol_options_set_min_tls_protocol_version(security, .TLSv12)
            if IPv4Address(host) == nil && IPv6Address(host) == nil {
                sec_protocol_options_set_tls_server_name(security, host)
            }
            if let identity = context.identity, let secIdentity = sec_identity_create(identity) {
                sec_protocol_options_set_local_identity(security, secIdentity)
            }
            sec_protocol_options_set_verify_block(
                security,
                { _, trust, complete in
                    complete(verifier.accepts(sec_trust_copy_ref(trust).takeRetainedValue()))
                }, queue)
            connection = NWConnection(
                host: NWEndpoint.Host(host), port: networkPort, using: NWParameters(tls: tls, tcp: .init()))
            connection.stateUpdateHandler = { [weak self] state in self?.changed(to: state) }
            connection.start(queue: queue)
            condition.lock()
            defer { condition.unlock() }
            while !isReady && failure == nil {
                guard condition.wait(until: Self.date(of: deadline)) || isReady || failure != nil else {
                    connection.cancel()
                    throw TransportFailure(description: "cannot connect to \(endpoint): timed out")
                }
            }
            if let failure {
                connection.cancel()
                throw TransportFailure(description: failure)
            }
        }

        deinit {
            connection.cancel()
        }

        /// Checks a member's chain for the verify block, and keeps why it refused one: clearer than the TLS error
        /// that follows.
        private final class Verifier: @unchecked Sendable {
            private let context: TLSContext
            private let host: String
            private let lock = Lock()
            private var stored: String?

            init(context: TLSContext, host: String) {
                self.context = context
                self.host = host
            }

            var refusal: String? { lock.withLock { stored } }

            func accepts(_ trust: SecTrust) -> Bool {
                let refusal = context.evaluate(trust, host: host)
                lock.withLock { stored = refusal }
                return refusal == nil
            }
        }

        private func update(_ change: (NetworkStream) -> Void) {
            condition.lock()
            change(self)
            condition.broadcast()
            condition.unlock()
        }

        private func changed(to state: NWConnection.State) {
            update { stream in
                switch state {
                case .ready:
                    stream.isReady = true
                case .waiting(let error):
                    // Refused or unreachable: the system would wait for the network to change; a client with other
                    // endpoints does not. A handshake that fails may arrive here too.
                    if stream.isReady {
                        stream.fail("the connection broke: \(error)")
                    } else if case .tls = error {
                        stream.fail(stream.handshakeFailure(error))
                    } else {
                        stream.fail("cannot connect to \(stream.endpoint): \(error)")
                    }
                case .failed(let error):
                    stream.fail(stream.isReady ? "the connection broke: \(error)" : stream.handshakeFailure(error))
                case .cancelled:
                    stream.fail("the connection was closed")
                default:
                    break
                }
            }
        }

        /// Records the first failure; the condition's lock is held.
        private func fail(_ reason: String) {
            if failure == nil { failure = reason }
        }

        /// Why the handshake failed, in the words the Linux client uses for the same causes.
        private func handshakeFailure(_ error: NWError) -> String {
            if let refusal = verifier.refusal {
                return "the TLS handshake failed: the member's certificate was refused: \(refusal)"
            }
            if case .tls = error, !hasClientCertificate {
                return "the TLS handshake failed: \(error); if the member asks for a client certificate "
                    + "(--client-cert-auth), give pkcs12File"
            }
            return "the TLS handshake failed: \(error)"
        }

        func write(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws {
            let sent = DispatchSemaphore(value: 0)
            let outcome = SendOutcome()
            connection.send(
                content: Data(bytes),
                completion: .contentProcessed { error in
                    outcome.set(error.map { "\($0)" })
                    sent.signal()
                })
            guard sent.wait(timeout: Self.dispatchTime(of: deadline)) == .success else {
                connection.cancel()
                throw TransportFailure(description: "timed out sending the request")
            }
            if let error = outcome.error {
                throw TransportFailure(description: "sending the request failed: \(error)")
            }
        }

        /// The error of one send, set on the connection's queue and read after its semaphore.
        private final class SendOutcome: @unchecked Sendable {
            private let lock = Lock()
            private var stored: String?
            var error: String? { lock.withLock { stored } }
            func set(_ error: String?) { lock.withLock { stored = error } }
        }

        func read(atMost maximum: Int, before deadline: ContinuousClock.Instant) throws -> [UInt8] {
            condition.lock()
            defer { condition.unlock() }
            while buffer.isEmpty && !peerClosed && failure == nil {
                receiveLocked()
                guard
                    condition.wait(until: Self.date(of: deadline)) || !buffer.isEmpty || peerClosed
                        || failure != nil
                else {
                    connection.cancel()
                    throw TransportFailure(description: "timed out waiting for the answer")
                }
            }
            if !buffer.isEmpty {
                let count = min(max(1, maximum), buffer.count)
                defer { buffer.removeFirst(count) }
                return Array(buffer.prefix(count))
            }
            if let failure, !peerClosed { throw TransportFailure(description: failure) }
            return []
        }

        /// Asks for the next bytes unless a receive is outstanding; the condition's lock is held.
        private func receiveLocked() {
            guard !isReceiving, !peerClosed, failure == nil else { return }
            isReceiving = true
            connection.receive(minimumIncompleteLength: 1, maximumLength: Self.receiveSize) {
                [weak self] data, _, isComplete, error in
                self?.update { stream in
                    stream.isReceiving = false
                    if let data { stream.buffer += data }
                    if isComplete { stream.peerClosed = true }
                    if let error { stream.fail("the connection broke: \(error)") }
                }
            }
        }

        var isReusable: Bool {
            condition.lock()
            defer { condition.unlock() }
            guard isReady, buffer.isEmpty, !peerClosed, failure == nil else { return false }
            // An idle connection keeps a receive outstanding, so that a member closing it, or sending what no
            // request asked for, is seen before the connection is used again.
            receiveLocked()
            return true
        }

        func shutdownNow() {
            connection.cancel()
        }

        private static func date(of deadline: ContinuousClock.Instant) -> Date {
            Date(timeIntervalSinceNow: seconds(until: deadline))
        }

        private static func dispatchTime(of deadline: ContinuousClock.Instant) -> DispatchTime {
            .now() + seconds(until: deadline)
        }

        private static func seconds(until deadline: ContinuousClock.Instant) -> Double {
            let (seconds, attoseconds) = (deadline - .now).components
            return max(0, Double(seconds) + Double(attoseconds) / 1e18)
        }
    }
#endif
