import Foundation

/// Opens the byte stream to an endpoint: TCP for `http://`, TLS over TCP for `https://`. Every connection of a
/// client is opened here, so that what an endpoint needs beyond TCP is decided in one place.
@available(watchOS, unavailable)
struct Connector: Sendable {
    /// What `https://` endpoints are checked against, and the client certificate; `nil` when no endpoint is one.
    let tls: TLSContext?

    init(tls: TLSContext? = nil) {
        self.tls = tls
    }

    /// A stream to `url`'s host and port (2379 if none is given), connected (and TLS's handshake done) before
    /// `deadline`.
    /// - Throws: ``TransportFailure`` naming the endpoint's scheme if it is not one the client speaks, or why the
    ///   connection could not be made.
    func open(_ url: URL, before deadline: ContinuousClock.Instant) throws -> ByteStream {
        guard let scheme = url.scheme, scheme == "http" || scheme == "https", let host = url.host else {
            throw TransportFailure(description: "\(url.absoluteString) is not an http:// or https:// endpoint")
        }
        let port = url.port ?? 2379
        guard scheme == "https" else { return try SocketStream(host: host, port: port, before: deadline) }
        guard let tls else {
            throw TransportFailure(description: "\(url.absoluteString) is https://, and the client has no TLS set up")
        }
        #if os(Linux)
            let socket = try SocketStream(host: host, port: port, before: deadline)
            return try TLSStream(over: socket, context: tls, host: host, before: deadline)
        #elseif canImport(Network)
            return try NetworkStream(host: host, port: port, context: tls, before: deadline)
        #else
            throw TransportFailure(description: "https:// endpoints need Linux's OpenSSL or Apple's Network framework")
        #endif
    }
}
