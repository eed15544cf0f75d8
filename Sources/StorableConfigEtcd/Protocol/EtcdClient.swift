import Foundation
import StorableConfig

/// Requests to etcd's v3 JSON gateway, with failover between endpoints and token authentication.
///
/// Every call is synchronous, bounded by `timeout` per endpoint, and tries the endpoints in turn, starting
/// with the one that answered last. Keys and values are base64 on the wire; 64-bit integers come back as
/// strings; fields that are zero, false or empty are left out.
final class EtcdClient: @unchecked Sendable {
    let endpoints: [URL]
    let timeout: TimeInterval
    let credentials: EtcdStore.Credentials?
    /// Opens every connection of this client.
    let connector: Connector
    /// The endpoint that answered last, and the auth token.
    private let state = NSLock()
    private var current = 0
    private var token: String?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// An answer from etcd that is an error (HTTP 400/401/503), as opposed to no answer at all.
    struct ServerError: Error, CustomStringConvertible {
        let status: Int
        let message: String
        var description: String { "etcd answered \(status): \(message)" }
    }

    init(
        endpoints: [URL], timeout: TimeInterval, credentials: EtcdStore.Credentials?, connector: Connector = Connector()
    ) {
        self.endpoints = endpoints
        self.connector = connector
        self.timeout = timeout
        self.credentials = credentials
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
        state.withLock { self.token = token }
        return token
    }

    /// POSTs `body` to `/v3/<path>` and returns the decoded answer, trying each endpoint in turn, each for at
    /// most `timeout`, and none past `deadline` (creating a store waits at most three timeouts in all, however
    /// many endpoints there are).
    func call(
        _ path: String, _ body: [String: Any], authorized: Bool = true, deadline: Date? = nil
    ) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: body)
        var problems: [String] = []
        let start = state.withLock { current }
        for offset in 0..<endpoints.count {
            let index = (start + offset) % endpoints.count
            let endpoint = endpoints[index]
            let attemptEnd = min(Date().addingTimeInterval(timeout), deadline ?? .distantFuture)
            guard attemptEnd.timeIntervalSinceNow > 0 else {
                problems.append("\(endpoint.absoluteString): not tried, the time limit was reached")
                continue
            }
            do {
                let answer = try send(data, to: endpoint, path: path, authorized: authorized, until: attemptEnd)
                state.withLock { current = index }
                return answer
            } catch let error as ServerError
                where error.status == 401 || error.message.contains("invalid auth token")
                || error.message.contains("token") && error.message.contains("invalid")
            {
                // An expired token: authenticate again, once, and retry on this endpoint.
                guard authorized, let credentials else { throw error }
                state.withLock { token = nil }
                _ = try authenticate(credentials, deadline: deadline)
                let answer = try send(
                    data, to: endpoint, path: path, authorized: authorized,
                    until: min(Date().addingTimeInterval(timeout), deadline ?? .distantFuture))
                state.withLock { current = index }
                return answer
            } catch let error as ServerError where error.status < 500 {
                throw error
            } catch {
                problems.append("\(endpoint.absoluteString): \(error)")
            }
        }
        throw Failure(description: "no etcd endpoint answered (\(problems.joined(separator: "; ")))")
    }

    private func send(
        _ data: Data, to endpoint: URL, path: String, authorized: Bool, until end: Date
    ) throws -> [String: Any] {
        var headers: [String: String] = [:]
        if authorized, let token = try authorization(deadline: end) { headers["Authorization"] = token }
        let (status, body) = try HTTPConnection.post(
            endpoint, through: connector, path: Self.path(of: endpoint, "v3/\(path)"), body: data, headers: headers,
            until: end)
        return try Self.answer(status: status, body: body)
    }

    /// The JSON object of an answer, which a network peer sent; an empty object if the body is not one.
    /// - Throws: ``ServerError`` with etcd's message (or the body's first 300 bytes) unless `status` is 200.
    static func answer(status: Int, body: Data) throws -> [String: Any] {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        guard status == 200 else {
            let message =
                object["message"] as? String ?? object["error"] as? String
                ?? String(decoding: body.prefix(300), as: UTF8.self)
            throw ServerError(status: status, message: message)
        }
        return object
    }

    /// The request path for `path` under `endpoint`'s own path.
    static func path(of endpoint: URL, _ path: String) -> String {
        let base = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        return base + "/" + path
    }

    // MARK: Encoding

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static func text(base64 value: Any?) -> String? {
        guard let string = value as? String, let data = Data(base64Encoded: string) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func int(_ value: Any?) -> Int64 {
        if let string = value as? String { return Int64(string) ?? 0 }
        if let number = value as? NSNumber { return number.int64Value }
        return 0
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

/// A value and a lock, for the client's completion handlers.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
