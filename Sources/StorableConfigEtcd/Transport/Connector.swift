import Foundation

/// Opens the byte stream to an endpoint: TCP for `http://`. Every connection of a client is opened here, so
/// that what an endpoint needs beyond TCP (TLS) is decided in one place.
struct Connector: Sendable {
    /// A stream to `url`'s host and port (2379 if none is given), connected before `deadline`.
    /// - Throws: ``TransportFailure`` naming the endpoint's scheme if it is not one the client speaks, or why the
    ///   connection could not be made.
    func open(_ url: URL, before deadline: ContinuousClock.Instant) throws -> ByteStream {
        guard url.scheme == "http", let host = url.host else {
            throw TransportFailure(description: "\(url.absoluteString) is not an http:// endpoint")
        }
        return try SocketStream(host: host, port: url.port ?? 2379, before: deadline)
    }
}
