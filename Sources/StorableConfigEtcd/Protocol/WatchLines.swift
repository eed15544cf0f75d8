import Foundation

/// The lines of a watch's streamed answer, one JSON object each, from the body's bytes as they arrive.
///
/// Each byte is searched for the end of its line once, however the stream is split: a line of several megabytes
/// that arrives in small pieces costs no more than one that arrives whole.
@available(watchOS, unavailable)
struct WatchLines {
    /// The longest line taken: 64 MiB. etcd's own lines are far shorter (an event holds a key and its value,
    /// and its previous value, each under `--max-request-bytes`, 1.5 MiB by default, as base64).
    static let maximumLineLength = 64 << 20

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var pending: [UInt8] = []
    /// Where the first unfinished line starts, and how many of its bytes are known to hold no newline.
    private var start = 0
    private var searched = 0

    /// Adds the next bytes of the body.
    /// - Throws: If a line grows past ``maximumLineLength`` without its newline (its bytes are dropped).
    mutating func append(_ bytes: [UInt8]) throws {
        if start > 0 && start >= pending.count / 2 {
            pending.removeFirst(start)
            start = 0
        }
        if pending.count - start + bytes.count > Self.maximumLineLength,
            !bytes.contains(10) || pending.count - start + bytes.firstIndex(of: 10)! > Self.maximumLineLength
        {
            pending = []
            start = 0
            searched = 0
            throw Failure(description: "a line of the watch is longer than \(Self.maximumLineLength) bytes")
        }
        pending += bytes
    }

    /// The next whole line, without its newline; `nil` until one has arrived.
    mutating func next() -> Data? {
        guard let newline = pending[(start + searched)...].firstIndex(of: 10) else {
            searched = pending.count - start
            return nil
        }
        let line = Data(pending[start..<newline])
        start = newline + 1
        searched = 0
        return line
    }

    /// The bytes after the last whole line.
    var remainder: [UInt8] { Array(pending[start...]) }
}
