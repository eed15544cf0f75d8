import Foundation

/// Reads one HTTP/1.1 response from a stream of bytes: the status line, the headers, and the body, whether its
/// length is given, it is chunked, or it ends with the connection.
///
/// Apart from the socket, so that what a network peer sends, byte by byte, can be checked on its own (the
/// `etcd-response` fuzz target, Docs/Fuzzing.md). The peer is not trusted:
/// - a line of the head, a chunk size or a trailer longer than ``maximumLineLength`` is refused, and so are more
///   than ``maximumHeaderCount`` headers;
/// - a length or chunk size must be a plain number, and two lengths must agree;
/// - a body longer than the reader's `maximumBody` is refused as soon as its length says so, or as soon as that
///   many bytes have come, so the memory an answer takes is bounded whatever the peer sends;
/// - the body is handed on as it arrives, never gathered into one chunk first;
/// - each byte is looked at a bounded number of times however the stream is split.
@available(watchOS, unavailable)
struct HTTPResponseReader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The longest status line, header line, chunk-size line or trailer line taken.
    static let maximumLineLength = 65_536
    /// The most header or trailer lines taken.
    static let maximumHeaderCount = 256
    /// The most informational (1xx) answers skipped before the real one.
    static let maximumInformationalAnswers = 8

    /// The next bytes of the stream, or `nil` at its end.
    private let receive: () throws -> [UInt8]?
    /// The most body bytes taken, or `nil` for a stream without end (a watch).
    private let maximumBody: Int?
    private var buffered: [UInt8] = []
    /// Where the unread bytes of `buffered` start: bytes are dropped from its front in bulk, not one line at a time.
    private var start = 0
    private var bodyCount = 0

    /// Whether the answer read last leaves the connection able to carry another request: HTTP/1.1 without
    /// `Connection: close` (or HTTP/1.0 with `keep-alive`), a body whose end was known from its framing, and no
    /// byte beyond it.
    private(set) var connectionReusable = false

    /// A reader of the bytes that `receive` returns, in order, until it returns `nil`, that takes at most
    /// `maximumBody` bytes of body (`nil`: no limit).
    init(maximumBody: Int? = nil, receive: @escaping () throws -> [UInt8]?) {
        self.maximumBody = maximumBody
        self.receive = receive
    }

    /// Reads the status and headers, then hands the body to `onData` as it arrives (chunk by chunk for a
    /// chunked body, whose trailers are skipped), and returns the status. Informational answers (1xx) before
    /// the real one are skipped.
    mutating func readResponse(
        onHead: (Int) throws -> Void = { _ in }, onData: ([UInt8]) throws -> Void
    ) throws -> Int {
        connectionReusable = false
        var head = try readHead()
        var informational = 0
        while (100...199).contains(head.status) {
            informational += 1
            guard informational <= Self.maximumInformationalAnswers else {
                throw Failure(description: "more than \(Self.maximumInformationalAnswers) informational answers")
            }
            head = try readHead()
        }
        try onHead(head.status)
        let framed: Bool
        if head.status == 204 || head.status == 304 {
            framed = true
        } else if head.chunked {
            try readChunks(onData)
            framed = true
        } else if let length = head.length {
            try checkLimit(adding: length)
            try deliver(count: length, onData)
            framed = true
        } else {
            try deliverUntilEnd(onData)
            framed = false
        }
        connectionReusable = head.keepAlive && framed && !head.conflictingFraming && start == buffered.count
        return head.status
    }

    private struct Head {
        var status = 0
        var length: Int?
        var chunked = false
        var keepAlive = false
        /// Both a length and chunked framing: read as chunked, as RFC 9112 says, but never reused.
        var conflictingFraming = false
    }

    private mutating func readHead() throws -> Head {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3,
            parts[1].utf8.allSatisfy({ (48...57).contains($0) }), let status = Int(parts[1]),
            (100...999).contains(status)
        else {
            throw Failure(description: "not an HTTP answer: \(Self.shown(statusLine))")
        }
        var head = Head(status: status, keepAlive: parts[0] == "HTTP/1.1")
        var lines = 0
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            lines += 1
            guard lines <= Self.maximumHeaderCount else {
                throw Failure(description: "more than \(Self.maximumHeaderCount) header lines")
            }
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].lowercased()
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length":
                guard let count = Self.number(value, radix: 10), head.length == nil || head.length == count else {
                    throw Failure(description: "a bad Content-Length: \(Self.shown(value))")
                }
                head.length = count
            case "transfer-encoding":
                if value.lowercased().contains("chunked") { head.chunked = true }
            case "connection":
                let options = value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if options.contains("close") { head.keepAlive = false }
                if options.contains("keep-alive") && parts[0] == "HTTP/1.0" { head.keepAlive = true }
            default:
                break
            }
        }
        head.conflictingFraming = head.chunked && head.length != nil
        return head
    }

    private mutating func readChunks(_ onData: ([UInt8]) throws -> Void) throws {
        while true {
            let sizeLine = try readLine()
            let sizeText = sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0]
            guard let size = Self.number(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw Failure(description: "a bad chunk size: \(Self.shown(sizeLine))")
            }
            if size == 0 {
                // Trailers, up to an empty line.
                var lines = 0
                while try !readLine().isEmpty {
                    lines += 1
                    guard lines <= Self.maximumHeaderCount else {
                        throw Failure(description: "more than \(Self.maximumHeaderCount) trailer lines")
                    }
                }
                return
            }
            try checkLimit(adding: size)
            try deliver(count: size, onData)
            guard try readLine().isEmpty else { throw Failure(description: "a chunk longer than its size") }
        }
    }

    /// Counts `count` more bytes of body, or throws if that takes the body over the limit.
    private mutating func checkLimit(adding count: Int) throws {
        let (total, overflow) = bodyCount.addingReportingOverflow(count)
        if let maximumBody, overflow || total > maximumBody {
            throw Failure(
                description: "the answer's body is longer than the \(maximumBody) bytes the client takes")
        }
        bodyCount = overflow ? .max : total
    }

    /// A length or chunk size: digits only (no sign, no space), in `radix`, that fits in `Int`.
    private static func number(_ text: some StringProtocol, radix: Int) -> Int? {
        let digits = radix == 16 ? "0123456789abcdefABCDEF" : "0123456789"
        guard !text.isEmpty, text.allSatisfy({ digits.contains($0) }) else { return nil }
        return Int(text, radix: radix)
    }

    /// Text from the peer, shortened and with its control characters escaped, to be shown in an error.
    static func shown(_ text: some StringProtocol) -> String {
        String(text.prefix(80)).unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0)
        }.joined()
    }

    /// Appends the next bytes of the stream; `false` at its end.
    private mutating func fill() throws -> Bool {
        guard let bytes = try receive() else { return false }
        if start > 0 && start >= buffered.count / 2 {
            buffered.removeFirst(start)
            start = 0
        }
        buffered += bytes
        return true
    }

    private mutating func readLine() throws -> String {
        // How many unread bytes are known to hold no newline: each byte is searched once.
        var searched = 0
        while true {
            if let index = buffered[(start + searched)...].firstIndex(of: 10) {
                guard index - start <= Self.maximumLineLength else { throw tooLong() }
                let line = buffered[start..<index]
                start = index + 1
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            searched = buffered.count - start
            guard searched <= Self.maximumLineLength else { throw tooLong() }
            guard try fill() else { throw Failure(description: "the connection closed in the middle of a line") }
        }
    }

    private func tooLong() -> Failure {
        Failure(description: "a line of the answer's head is longer than \(Self.maximumLineLength) bytes")
    }

    /// Hands the next `count` bytes on as they arrive.
    private mutating func deliver(count: Int, _ onData: ([UInt8]) throws -> Void) throws {
        var remaining = count
        while remaining > 0 {
            if start == buffered.count {
                buffered.removeAll(keepingCapacity: true)
                start = 0
                guard try fill() else {
                    throw Failure(description: "the connection closed in the middle of the body")
                }
            }
            let end = start + min(remaining, buffered.count - start)
            try onData(Array(buffered[start..<end]))
            remaining -= end - start
            start = end
        }
    }

    /// Hands on every byte up to the end of the stream.
    private mutating func deliverUntilEnd(_ onData: ([UInt8]) throws -> Void) throws {
        if start < buffered.count {
            try checkLimit(adding: buffered.count - start)
            try onData(Array(buffered[start...]))
        }
        buffered = []
        start = 0
        while let bytes = try receive() {
            guard !bytes.isEmpty else { continue }
            try checkLimit(adding: bytes.count)
            try onData(bytes)
        }
    }
}
