import Foundation

/// An HTTP/1.1 connection to one endpoint, kept open between requests when the peer allows it: what etcd's JSON
/// gateway needs, and no more.
///
/// Not URLSession: on Linux, corelibs FoundationNetworking stops the process ("Transfer completed, but there's no
/// response") when a response carries trailers, and etcd's gateway sends every error (a wrong password, no
/// leader, a request too large) with a `Trailer` header. The bytes go over a ``ByteStream`` that
/// ``Connector`` opens (TCP).
///
/// One request at a time; not for use from two threads at once, except ``shutdownNow()``.
@available(watchOS, unavailable)
final class HTTPConnection {
    /// How far an exchange got before it failed: what tells whether the request may have reached the peer.
    enum Stage: Sendable {
        /// Connecting, or writing the request: the peer cannot have taken a request it did not get whole.
        case sending
        /// The request was sent; no byte of the answer came.
        case awaitingAnswer
        /// Part of the answer came.
        case readingAnswer
    }

    /// Why an exchange failed, and how far it got.
    struct Failure: Error, CustomStringConvertible {
        let stage: Stage
        let description: String
    }

    let endpoint: URL
    private let stream: ByteStream
    /// Requests this connection has carried: a failure on a connection that carried one before may be the
    /// peer having closed it while it was idle.
    private(set) var requestsCarried = 0
    private var reusable = true

    /// A connection to `endpoint`, opened through `connector` before `deadline`.
    init(to endpoint: URL, through connector: Connector, before deadline: ContinuousClock.Instant) throws {
        self.endpoint = endpoint
        do {
            stream = try connector.open(endpoint, before: deadline)
        } catch {
            throw Failure(stage: .sending, description: "\(error)")
        }
    }

    /// Ends the connection from another thread: a read or write in progress fails at once.
    func shutdownNow() {
        stream.shutdownNow()
    }

    /// Whether the connection can carry another request: the last answer was read whole, the peer allows it,
    /// and it has not closed the connection or sent anything since.
    var isReusable: Bool { reusable && stream.isReusable }

    /// The `Host` header for `endpoint`.
    static func hostHeader(of endpoint: URL) -> String {
        let host = endpoint.host ?? ""
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return endpoint.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    /// The bytes of a POST of `body` to `path`.
    /// - Throws: If the path, host, a header's name or value holds a byte that would end a line or the head
    ///   (CR, LF, NUL, or a control character): a value from a peer (a token) must not add headers or requests.
    static func request(
        path: String, host: String, headers: [(name: String, value: String)], body: Data
    ) throws -> [UInt8] {
        func check(_ text: String, _ what: String, allowingSpace: Bool) throws {
            for byte in text.utf8 where byte < 0x20 || byte == 0x7F || (!allowingSpace && byte == 0x20) {
                throw Failure(
                    stage: .sending,
                    description: "the request's \(what) holds the control byte 0x\(String(byte, radix: 16)); "
                        + "it was not sent")
            }
        }
        try check(path, "path", allowingSpace: false)
        try check(host, "host", allowingSpace: false)
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\n"
        for (name, value) in headers {
            try check(name, "header name \(HTTPResponseReader.shown(name))", allowingSpace: false)
            guard !name.isEmpty, !name.contains(":") else {
                throw Failure(stage: .sending, description: "a header name is empty or holds a colon")
            }
            try check(value, "\(name) header", allowingSpace: true)
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + Array(body)
    }

    /// Sends `request` (from ``request(path:host:headers:body:)``) before `deadline`.
    func send(_ request: [UInt8], before deadline: ContinuousClock.Instant) throws {
        requestsCarried += 1
        reusable = false
        do {
            try stream.write(request, before: deadline)
        } catch {
            throw Failure(stage: .sending, description: "\(error)")
        }
    }

    /// Reads the answer: the status and headers, then the body, handed to `onData` as it arrives; returns the
    /// status. Every read must be done by `deadline()`, asked before each one; at most `maximumBody` bytes of
    /// body are taken (`nil`: a stream without end).
    func readResponse(
        maximumBody: Int?, deadline: @escaping () -> ContinuousClock.Instant, onHead: (Int) throws -> Void = { _ in },
        onData: ([UInt8]) throws -> Void
    ) throws -> Int {
        var received = false
        var reader = HTTPResponseReader(maximumBody: maximumBody) { [stream] in
            let bytes = try stream.read(atMost: 65_536, before: deadline())
            if !bytes.isEmpty { received = true }
            return bytes.isEmpty ? nil : bytes
        }
        do {
            let status = try reader.readResponse(onHead: onHead, onData: onData)
            reusable = reader.connectionReusable
            return status
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(stage: received ? .readingAnswer : .awaitingAnswer, description: "\(error)")
        }
    }

    /// One POST and its whole answer over this connection, all of it by `deadline`.
    func post(
        path: String, body: Data, headers: [(name: String, value: String)], maximumBody: Int,
        before deadline: ContinuousClock.Instant
    ) throws -> (status: Int, body: Data) {
        let request = try Self.request(
            path: path, host: Self.hostHeader(of: endpoint), headers: headers, body: body)
        try send(request, before: deadline)
        var data = Data()
        let status = try readResponse(maximumBody: maximumBody, deadline: { deadline }) { data.append(contentsOf: $0) }
        return (status, data)
    }

    /// One POST over a connection of its own, closed after it, with its whole answer by `end`.
    static func post(
        _ url: URL, through connector: Connector = Connector(), path: String, body: Data,
        headers: [(name: String, value: String)], maximumBody: Int = EtcdClient.maximumAnswerBytes, until end: Date
    ) throws -> (status: Int, body: Data) {
        let deadline = ContinuousClock.now + .seconds(max(0, min(end.timeIntervalSinceNow, 86_400)))
        let connection = try HTTPConnection(to: url, through: connector, before: deadline)
        defer { connection.shutdownNow() }
        return try connection.post(
            path: path, body: body, headers: headers, maximumBody: maximumBody, before: deadline)
    }
}
