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
        let socket = try SocketStream(host: host, port: url.port ?? 2379, before: deadline)
        guard scheme == "https" else { return socket }
        #if os(Linux)
            guard let tls else {
                throw TransportFailure(
                    description: "\(url.absoluteString) is https://, and the client has no TLS set up")
            }
            return try TLSStream(over: socket, context: tls, host: host, before: deadline)
        #else
            throw TransportFailure(
                description: "https:// endpoints are supported on Linux only so far (Docs/Etcd.md, \"TLS\")")
        #endif
    }
}
