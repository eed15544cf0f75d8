import Foundation
import StorableConfig

/// Requests to etcd's v3 JSON gateway, with failover between endpoints, kept connections and token
/// authentication.
///
/// Every call is synchronous, bounded by `timeout` per endpoint (connecting, sending and the whole answer), and
/// tries the endpoints in turn, starting with the one that answered last. Keys and values are base64 on the
/// wire; 64-bit integers come back as strings; fields that are zero, false or empty are left out.
///
/// What a member sends is not trusted: an answer that is not etcd's (a page of a proxy, a redirect, truncated
/// JSON) sends the request to the next member; only etcd's own refusal (a 4xx status with etcd's JSON error) is
/// final. See Docs/Etcd.md, "Limits".
@available(watchOS, unavailable)
final class EtcdClient: @unchecked Sendable {
    let endpoints: [URL]
    let timeout: TimeInterval
    let credentials: EtcdStore.Credentials?
    /// Opens every connection of this client.
    let connector: Connector
    /// Guards `current`, `token` and `idle`; held for no call.
    private let state = Lock()
    /// The endpoint that answered last.
    private var current = 0
    private var token: String?
    /// Kept connections, by endpoint index, that no request is using.
    private var idle: [Int: [HTTPConnection]] = [:]

    /// The largest answer to a request the client reads (a read of the whole prefix): 256 MiB.
    static let maximumAnswerBytes = 256 << 20
    /// Kept connections per endpoint that wait for the next request.
    static let maximumIdleConnections = 4

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// An answer from etcd that is an error (HTTP 400/401/503), as opposed to no answer at all.
    struct ServerError: Error, CustomStringConvertible {
        let status: Int
        let message: String
        /// Whether etcd itself refused the request (its JSON error, with a gRPC code), as opposed to something in
        /// front of it or in its place (a proxy's page, a redirect, a 404): only etcd's own refusal is final.
        var isEtcdsOwn = true
        var description: String { "etcd answered \(status): \(message)" }
    }

    /// A request's answer was lost after it was sent: it may or may not have been carried out.
    struct AnswerLost: Error, CustomStringConvertible {
        let endpoint: URL
        let reason: String
        var description: String {
            "\(endpoint.absoluteString) took the request but its answer was lost (\(reason)); it may have been "
                + "carried out"
        }
    }

    /// No token could be had for a request: the authentication's own call has tried every endpoint, and its
    /// failure says what each did. Not taken as one endpoint's failure, whose message would nest it in its own.
    private struct NoToken: Error {
        let failure: Failure
    }

    /// Whether a request may be sent again (to the same member on a new connection, or to the next member) after
    /// its answer was lost.
    enum Resending {
        /// A read, or a plain put or delete (sent again, it leaves the same value).
        case allowed
        /// A transaction with comparisons: sent twice, the second can fail on the first's own change; the caller
        /// checks instead (``AnswerLost``).
        case notAllowed
    }

    init(
        endpoints: [URL], timeout: TimeInterval, credentials: EtcdStore.Credentials?, connector: Connector = Connector()
    ) {
        self.endpoints = endpoints
        self.connector = connector
        self.timeout = timeout
        self.credentials = credentials
    }

    deinit {
        for connection in idle.values.joined() { connection.shutdownNow() }
    }

    var endpointList: String { endpoints.map(\.absoluteString).joined(separator: ", ") }

    func authorization(deadline: Date? = nil) throws -> String? {
        guard let credentials else { return nil }
        if let token = state.withLock({ token }) { return token }
        return try authenticate(credentials, deadline: deadline)
    }

    /// Drops the token, so that the next request authenticates again.
    func forgetToken() {
        state.withLock { token = nil }
    }

    private func authenticate(_ credentials: EtcdStore.Credentials, deadline: Date?) throws -> String {
        let answer = try call(
            "auth/authenticate", ["name": credentials.user, "password": credentials.password], authorized: false,
            deadline: deadline)
        guard let token = answer["token"] as? String else {
            throw Failure(description: "etcd gave no token for the user \(credentials.user)")
        }
        guard Self.isPlausibleToken(token) else {
            throw Failure(
                description: "a member gave a token for the user \(credentials.user) that holds characters etcd never "
                    + "issues (\(HTTPResponseReader.shown(token))); it was not used")
        }
        state.withLock { self.token = token }
        return token
    }

    /// Whether `token` is made of the characters etcd's simple and JWT tokens are made of, and short enough to
    /// be a header's value: a token from a peer goes into every request's head, to every member.
    static func isPlausibleToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 8192
            && token.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "._~+/=-".utf8.contains(byte)
                }
            }
    }

    /// POSTs `body` to `/v3/<path>` and returns the decoded answer, trying each endpoint in turn, each for at
    /// most `timeout`, and none past `deadline` (creating a store waits at most three timeouts in all, however
    /// many endpoints there are).
    ///
    /// - Throws: ``ServerError`` when etcd itself refuses the request; ``AnswerLost`` when a request that may not
    ///   be sent twice lost its answer; otherwise a ``Failure`` that says what each endpoint did.
    func call(
        _ path: String, _ body: [String: Any], authorized: Bool = true, deadline: Date? = nil,
        resending: Resending = .allowed
    ) throws -> [String: Any] {
        try call(path, body, authorized: authorized, deadline: deadline, resending: resending) { $0 }
    }

    /// The same, with the answer read by `decode`: an answer it refuses (not what etcd sends) is taken as that
    /// member's failure, and the next one is asked. `first` is the endpoint asked first (by default the one
    /// that answered last).
    func call<Result>(
        _ path: String, _ body: [String: Any], authorized: Bool = true, deadline: Date? = nil,
        resending: Resending = .allowed, first: Int? = nil, decode: ([String: Any]) throws -> Result
    ) throws -> Result {
        let data = try JSONSerialization.data(withJSONObject: body)
        var problems: [String] = []
        let start = first ?? state.withLock { current }
        for offset in 0..<endpoints.count {
            let index = (start + offset) % endpoints.count
            let endpoint = endpoints[index]
            let attemptEnd = min(Date().addingTimeInterval(timeout), deadline ?? .distantFuture)
            guard attemptEnd.timeIntervalSinceNow > 0 else {
                problems.append("\(endpoint.absoluteString): not tried, the time limit was reached")
                continue
            }
            do {
                let answer = try decode(
                    send(data, to: index, path: path, authorized: authorized, until: attemptEnd, resending: resending))
                state.withLock { current = index }
                return answer
            } catch let error as ServerError
                where authorized && credentials != nil
                && (error.status == 401 || error.message.contains("invalid auth token")
                    || error.message.contains("token") && error.message.contains("invalid"))
            {
                // An expired token: authenticate again, once, and retry on this endpoint.
                guard let credentials else { throw error }
                state.withLock { token = nil }
                _ = try authenticate(credentials, deadline: deadline)
                let answer = try decode(
                    send(
                        data, to: index, path: path, authorized: authorized,
                        until: min(Date().addingTimeInterval(timeout), deadline ?? .distantFuture),
                        resending: resending))
                state.withLock { current = index }
                return answer
            } catch let error as ServerError where error.isEtcdsOwn && error.status < 500 {
                throw error
            } catch let error as AnswerLost {
                throw error
            } catch let error as NoToken {
                throw error.failure
            } catch {
                problems.append("\(endpoint.absoluteString): \(error)")
            }
        }
        throw Failure(description: "no etcd endpoint answered (\(problems.joined(separator: "; ")))")
    }

    /// One request to one endpoint, over a kept connection if there is one. A kept connection that turns out to
    /// have been closed by the member is replaced, and the request sent again on a new one, if it had not
    /// reached the member or may be sent again.
    private func send(
        _ data: Data, to index: Int, path: String, authorized: Bool, until end: Date, resending: Resending
    ) throws -> [String: Any] {
        let endpoint = endpoints[index]
        var headers: [(name: String, value: String)] = []
        if authorized {
            let token: String?
            do {
                token = try authorization(deadline: end)
            } catch let failure as Failure {
                throw NoToken(failure: failure)
            }
            if let token { headers.append(("Authorization", token)) }
        }
        let deadline = ContinuousClock.now + .seconds(max(0, min(end.timeIntervalSinceNow, 86_400)))
        let requestPath = Self.path(of: endpoint, "v3/\(path)")
        while true {
            let kept = takeIdleConnection(index)
            let connection = try kept ?? HTTPConnection(to: endpoint, through: connector, before: deadline)
            do {
                let (status, body) = try connection.post(
                    path: requestPath, body: data, headers: headers, maximumBody: Self.maximumAnswerBytes,
                    before: deadline)
                if connection.isReusable { keep(connection, for: index) }
                return try Self.answer(status: status, body: body)
            } catch let failure as HTTPConnection.Failure {
                connection.shutdownNow()
                switch failure.stage {
                case .sending:
                    // Not taken by the member: a closed kept connection is replaced; a new one that fails is
                    // the endpoint's failure.
                    if kept != nil { continue }
                    throw failure
                case .awaitingAnswer, .readingAnswer:
                    if kept != nil && failure.stage == .awaitingAnswer && resending == .allowed { continue }
                    if resending == .notAllowed {
                        throw AnswerLost(endpoint: endpoint, reason: failure.description)
                    }
                    throw failure
                }
            }
        }
    }

    private func takeIdleConnection(_ index: Int) -> HTTPConnection? {
        while let connection = state.withLock({ idle[index]?.popLast() }) {
            if connection.isReusable { return connection }
            connection.shutdownNow()
        }
        return nil
    }

    private func keep(_ connection: HTTPConnection, for index: Int) {
        let kept = state.withLock { () -> Bool in
            guard idle[index, default: []].count < Self.maximumIdleConnections else { return false }
            idle[index, default: []].append(connection)
            return true
        }
        if !kept { connection.shutdownNow() }
    }

    /// The JSON object of an answer, which a network peer sent.
    /// - Throws: ``ServerError`` with etcd's message (or the body's first 300 bytes) unless `status` is 200, and
    ///   a ``Failure`` for a 200 whose body is not a JSON object (not etcd's answer: nothing says it was done).
    static func answer(status: Int, body: Data) throws -> [String: Any] {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        guard status == 200 else {
            let message =
                object?["message"] as? String ?? object?["error"] as? String
                ?? HTTPResponseReader.shown(String(decoding: body.prefix(300), as: UTF8.self))
            // etcd's gateway answers every refusal with its gRPC status's code and message.
            let isEtcdsOwn = object?["code"] is NSNumber && (object?["message"] ?? object?["error"]) is String
            throw ServerError(status: status, message: message, isEtcdsOwn: isEtcdsOwn)
        }
        guard let object else {
            throw Failure(
                description: "answered 200 with something that is not etcd's JSON ("
                    + HTTPResponseReader.shown(String(decoding: body.prefix(80), as: UTF8.self)) + ")")
        }
        return object
    }

    /// The request path for `path` under `endpoint`'s own path.
    static func path(of endpoint: URL, _ path: String) -> String {
        // As written in the URL: decoded, `%0D%0A` would end the request line.
        let own = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        let base = own.hasSuffix("/") ? String(own.dropLast()) : own
        return base + "/" + path
    }

    // MARK: Encoding

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// What a base64 field of an answer holds.
    enum Decoded: Equatable {
        case text(String)
        /// Base64 of bytes that are not UTF-8.
        case notUTF8
        /// Not base64 (or not a string): not as etcd sends keys and values.
        case notBase64
    }

    static func decoded(base64 value: Any?) -> Decoded {
        guard let string = value as? String, let data = Data(base64Encoded: string) else { return .notBase64 }
        guard let text = String(validating: data, as: UTF8.self) else { return .notUTF8 }
        return .text(text)
    }

    /// A 64-bit integer of an answer: etcd sends them as decimal strings. `0` when absent or not one.
    static func int(_ value: Any?) -> Int64 {
        revision(value) ?? 0
    }

    /// A revision as etcd sends it: a decimal string (or number) of a non-negative `Int64`; `nil` otherwise.
    static func revision(_ value: Any?) -> Int64? {
        if let string = value as? String {
            guard !string.isEmpty, string.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            return Int64(string)
        }
        if let number = value as? NSNumber {
            let exact = Int64(exactly: number.doubleValue)
            return exact.flatMap { $0 >= 0 ? $0 : nil }
        }
        return nil
    }

    /// Every key under `prefix`, as a range, a watch or a delete request names it: `key` and `range_end` (the
    /// empty prefix is every key, from the key `\0`).
    static func range(ofPrefix prefix: String) -> [String: Any] {
        [
            "key": prefix.isEmpty ? Data([0]).base64EncodedString() : base64(prefix),
            "range_end": rangeEnd(ofPrefix: prefix),
        ]
    }

    /// The end of the range of keys that start with `prefix`: its last byte plus one (`\0` for everything).
    static func rangeEnd(ofPrefix prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return Data(bytes).base64EncodedString()
            }
            bytes.removeLast()
        }
        return Data([0]).base64EncodedString()
    }
}
