import Foundation

/// Reads one HTTP/1.1 response from a stream of bytes: the status line, the headers, and the body, whether its
/// length is given, it is chunked, or it ends with the connection.
///
/// Apart from the socket, so that what a network peer sends, byte by byte, can be checked on its own (the
/// `etcd-response` fuzz target, Docs/Fuzzing.md). The peer is not trusted: a line of the head or a chunk size
/// longer than ``maximumLineLength`` is refused, a length or chunk size must be a plain number, and each byte is
/// looked at a bounded number of times however the stream is split.
struct HTTPResponseReader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The longest status line, header line, chunk-size line or trailer line taken.
    static let maximumLineLength = 65_536

    /// The next bytes of the stream, or `nil` at its end.
    private let receive: () throws -> [UInt8]?
    private var buffered: [UInt8] = []
    /// Where the unread bytes of `buffered` start: bytes are dropped from its front in bulk, not one line at a time.
    private var start = 0

    /// A reader of the bytes that `receive` returns, in order, until it returns `nil`.
    init(receive: @escaping () throws -> [UInt8]?) {
        self.receive = receive
    }

    /// Reads the status and headers, then hands the body to `onData` as it arrives (chunk by chunk for a
    /// chunked body, whose trailers are skipped), and returns the status.
    mutating func readResponse(onHead: (Int) -> Void = { _ in }, onData: ([UInt8]) -> Void) throws -> Int {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3,
            let status = Int(parts[1]), (100...999).contains(status)
        else {
            throw Failure(description: "not an HTTP answer: \(statusLine.prefix(80))")
        }
        var length: Int?
        var chunked = false
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].lowercased()
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            if name == "content-length" {
                guard let count = Self.number(value, radix: 10) else {
                    throw Failure(description: "a bad Content-Length: \(value.prefix(80))")
                }
                length = count
            }
            if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
        }
        onHead(status)
        if chunked {
            while true {
                let sizeLine = try readLine()
                let sizeText = sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0]
                guard let size = Self.number(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw Failure(description: "a bad chunk size: \(sizeLine.prefix(80))")
                }
                if size == 0 {
                    // Trailers, up to an empty line.
                    while try !readLine().isEmpty {}
                    break
                }
                onData(try read(count: size))
                _ = try readLine()
            }
        } else if let length {
            onData(try read(count: length))
        } else {
            if start < buffered.count { onData(Array(buffered[start...])) }
            buffered = []
            start = 0
            while let bytes = try receive() {
                if !bytes.isEmpty { onData(bytes) }
            }
        }
        return status
    }

    /// A length or chunk size: digits only (no sign, no space), in `radix`, that fits in `Int`.
    private static func number(_ text: some StringProtocol, radix: Int) -> Int? {
        let digits = radix == 16 ? "0123456789abcdefABCDEF" : "0123456789"
        guard !text.isEmpty, text.allSatisfy({ digits.contains($0) }) else { return nil }
        return Int(text, radix: radix)
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

    private mutating func read(count: Int) throws -> [UInt8] {
        while buffered.count - start < count {
            guard try fill() else { throw Failure(description: "the connection closed in the middle of the body") }
        }
        let bytes = Array(buffered[start..<start + count])
        start += count
        return bytes
    }
}
