import Foundation

/// A plain HTTP/1.1 exchange over a socket: what etcd's JSON gateway needs, and no more.
///
/// Not URLSession: on Linux, corelibs FoundationNetworking stops the process ("Transfer completed, but there's no
/// response") when a response carries trailers, and etcd's gateway sends every error (a wrong password, no
/// leader, a request too large) with a `Trailer` header. Plain `http://` endpoints only.
final class HTTPConnection {
    typealias Failure = TransportFailure

    private let stream: ByteStream
    /// When the next read or write must be done by: asked before each one.
    private let deadline: () -> ContinuousClock.Instant

    /// Connects to `url` through `connector` within `timeout`.
    init(
        to url: URL, through connector: Connector, timeout: TimeInterval, idleTimeout: @escaping () -> TimeInterval
    ) throws {
        stream = try connector.open(url, before: .now + .seconds(max(0, timeout)))
        deadline = { .now + .seconds(max(0, min(idleTimeout(), 86_400))) }
    }

    /// Ends the exchange from another thread: a read in progress fails at once.
    func shutdownNow() {
        stream.shutdownNow()
    }

    /// Sends a POST of `body` to `path`.
    func sendPost(host: String, path: String, body: Data, headers: [String: String]) throws {
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try stream.write(Array(head.utf8) + Array(body), before: deadline())
    }

    /// The next bytes the peer sent, or `nil` at the end of the stream.
    private func receive() throws -> [UInt8]? {
        let bytes = try stream.read(atMost: 65_536, before: deadline())
        return bytes.isEmpty ? nil : bytes
    }

    /// Reads the status and headers, then hands the body to `onData` as it arrives (chunk by chunk for a
    /// chunked body, whose trailers are skipped), and returns the status. See ``HTTPResponseReader``.
    func readResponse(onHead: (Int) -> Void = { _ in }, onData: ([UInt8]) -> Void) throws -> Int {
        var reader = HTTPResponseReader { [self] in try receive() }
        return try reader.readResponse(onHead: onHead, onData: onData)
    }

    /// One POST and its whole answer, all of it by `end`: the connection, the request and the answer.
    static func post(
        _ url: URL, through connector: Connector = Connector(), path: String, body: Data, headers: [String: String],
        until end: Date
    ) throws -> (status: Int, body: Data) {
        let remaining = { max(0, end.timeIntervalSinceNow) }
        let connection = try HTTPConnection(to: url, through: connector, timeout: remaining(), idleTimeout: remaining)
        let host = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        try connection.sendPost(host: host, path: path, body: body, headers: headers)
        var data = Data()
        let status = try connection.readResponse { data.append(contentsOf: $0) }
        return (status, data)
    }
}
