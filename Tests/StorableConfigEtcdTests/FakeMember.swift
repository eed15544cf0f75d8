import Foundation

import StorableConfigEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A peer on 127.0.0.1 that answers etcd's gateway paths with whatever a test says: a broken or hostile member,
/// a proxy in front of one, or a program on a mistyped port. It reads each request whole (head and body) and
/// keeps the connection for the next one unless its answer says otherwise.
///
/// Everything it does is bounded: every connection ends after ``lifetime`` seconds, and ``stop()`` (or
/// `deinit`) ends them all.
final class FakeMember: @unchecked Sendable {
    /// What the member does with one request.
    enum Reply {
        /// Sends these bytes, and keeps the connection for the next request.
        case bytes([UInt8])
        /// Sends these bytes, then closes the connection.
        case bytesThenClose([UInt8])
        /// Sends `head`, then `piece` as fast as the client takes it, without end.
        case endless(head: [UInt8], piece: [UInt8])
        /// Sends these bytes one at a time, one every `interval` seconds.
        case dribble([UInt8], interval: TimeInterval)
        /// Sends nothing and keeps the connection open.
        case silence
    }

    /// One request as it came.
    struct Request {
        let path: String
        /// The head as received, every line of it.
        let head: String
        let body: Data
        /// Which connection it came on: the descriptor, unique while the connection is open.
        let connection: Int32
    }

    var port: Int { listener.port }
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// How long a connection may last, whatever it does.
    let lifetime: TimeInterval = 30

    private let listener = LoopbackListener()
    private let answer: @Sendable (Request) -> Reply
    private let received = Locked<[Request]>([])

    /// Every request received so far.
    var requests: [Request] { received.withLock { $0 } }

    /// A member that answers each request with `answer(request)`.
    init(answer: @escaping @Sendable (Request) -> Reply) {
        self.answer = answer
        listener.start { [self] connection in serve(connection) }
    }

    deinit {
        stop()
    }

    func stop() {
        listener.stop()
    }

    private var isStopped: Bool { listener.isStopped }

    private func serve(_ connection: Int32) {
        let end = Date().addingTimeInterval(lifetime)
        var buffer: [UInt8] = []
        while !isStopped, Date() < end {
            guard let request = readRequest(connection, buffer: &buffer, until: end) else { return }
            received.withLock { $0.append(request) }
            switch answer(request) {
            case .bytes(let bytes):
                guard send(connection, bytes) else { return }
            case .bytesThenClose(let bytes):
                _ = send(connection, bytes)
                return
            case .endless(let head, let piece):
                guard send(connection, head) else { return }
                while !isStopped, Date() < end, send(connection, piece) {}
                return
            case .dribble(let bytes, let interval):
                for byte in bytes {
                    guard !isStopped, Date() < end, send(connection, [byte]) else { return }
                    Thread.sleep(forTimeInterval: interval)
                }
                return
            case .silence:
                while !isStopped, Date() < end { Thread.sleep(forTimeInterval: 0.05) }
                return
            }
        }
    }

    /// Reads one request's head and body; `nil` when the client closed the connection.
    private func readRequest(_ connection: Int32, buffer: inout [UInt8], until end: Date) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = buffer.firstRange(of: separator) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                let bodyStart = range.upperBound
                while buffer.count < bodyStart + length {
                    guard receive(connection, into: &buffer, until: end) else { return nil }
                }
                let body = Data(buffer[bodyStart..<bodyStart + length])
                buffer.removeFirst(bodyStart + length)
                let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                return Request(path: path, head: head, body: body, connection: connection)
            }
            guard receive(connection, into: &buffer, until: end) else { return nil }
        }
    }

    private func receive(_ connection: Int32, into buffer: inout [UInt8], until end: Date) -> Bool {
        while !isStopped, Date() < end {
            var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            buffer += chunk[..<count]
            return true
        }
        return false
    }

    private func send(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        LoopbackListener.send(connection, bytes)
    }

    // MARK: Answers

    /// An HTTP/1.1 answer with `status` and `body`, framed by its length.
    static func answer(_ status: Int = 200, _ body: String, headers: String = "") -> [UInt8] {
        Array(
            "HTTP/1.1 \(status) X\r\nContent-Type: application/json\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8)
    }

    /// etcd's answer to a read of a prefix that holds nothing, at `revision`.
    static func emptyRange(revision: Int64 = 5) -> [UInt8] {
        answer(200, #"{"header":{"cluster_id":"1","member_id":"2","revision":"\#(revision)","raft_term":"2"}}"#)
    }

    /// The head of a chunked answer, and the chunk that carries `line` and a newline.
    static let chunkedHead = Array(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    static func chunk(_ line: String) -> [UInt8] {
        let bytes = Array((line + "\n").utf8)
        return Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10]
    }
}
