import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of one etcd member, which breaks the store's watch where a network would:
/// it passes every connection through byte for byte, and its ``mode`` decides what happens to a connection whose
/// first request is a watch.
///
/// Everything it does is bounded: every connection ends after ``lifetime`` seconds, and ``stop()`` (or `deinit`)
/// ends them all. It listens on, and connects to, 127.0.0.1 only.
final class WatchProxy: @unchecked Sendable {
    enum Mode {
        /// Passes watches through.
        case passing
        /// Closes a watch's connection before it reaches the member, as a member that is down would.
        case refusingWatches
        /// Passes the next watch through up to the end of its first line of events, then cuts both connections;
        /// passes the watches after it through.
        case cuttingAfterFirstEvents
    }

    var port: Int { listener.port }
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// How long a connection may last, whatever it does.
    let lifetime: TimeInterval = 60

    private let upstreamPort: Int
    private let listener = LoopbackListener()
    private let state = Locked<(mode: Mode, cuts: Int)>((.passing, 0))

    /// A proxy to the member serving clients on `upstreamPort` of 127.0.0.1.
    init(upstreamPort: Int) {
        self.upstreamPort = upstreamPort
        listener.start { [self] client in relay(client) }
    }

    deinit {
        stop()
    }

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    /// Watches cut so far.
    var cuts: Int { state.withLock { $0.cuts } }

    func stop() {
        listener.stop()
    }

    /// Relays one connection until either side closes it, the proxy stops, or ``lifetime`` ends.
    private func relay(_ client: Int32) {
        guard let upstream = connectUpstream() else { return }
        defer { close(upstream) }
        guard listener.register(upstream) else { return }
        defer { listener.unregister(upstream) }
        let end = Date().addingTimeInterval(lifetime)
        var request: [UInt8] = []
        // Decided by the connection's first request: whether it is a watch, and what to do with it.
        var watchMode: Mode?
        var answer: [UInt8] = []
        while !listener.isStopped, Date() < end {
            var entries = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&entries, 2, 100) >= 0 else { return }
            if entries[0].revents != 0 {
                guard let bytes = receive(client) else { return }
                if watchMode == nil {
                    request += bytes
                    if request.count >= 16 { watchMode = decide(request) }
                    if watchMode == .refusingWatches { return }
                }
                guard LoopbackListener.send(upstream, bytes) else { return }
            }
            if entries[1].revents != 0 {
                guard let bytes = receive(upstream) else { return }
                guard watchMode == .cuttingAfterFirstEvents else {
                    guard LoopbackListener.send(client, bytes) else { return }
                    continue
                }
                answer += bytes
                if let end = Self.endOfFirstEventsLine(in: answer) {
                    _ = LoopbackListener.send(client, Array(answer[..<end]))
                    state.withLock { $0.cuts += 1 }
                    return
                }
            }
        }
    }

    /// What to do with a connection whose first request starts with `request`: the mode, for a watch (the next
    /// cut is taken by this one); `.passing` for any other request.
    private func decide(_ request: [UInt8]) -> Mode {
        guard String(decoding: request.prefix(16), as: UTF8.self).hasPrefix("POST /v3/watch") else { return .passing }
        return state.withLock { state -> Mode in
            let mode = state.mode
            if mode == .cuttingAfterFirstEvents { state.mode = .passing }
            return mode
        }
    }

    /// Where the first line of events ends in a chunked watch answer, just after its newline (the chunk's own
    /// `\r\n` may be missing: the reader has the line's bytes all the same). The JSON of a line holds no raw
    /// newline, and the chunks' framing puts a `\r` before each of its own.
    static func endOfFirstEventsLine(in answer: [UInt8]) -> Int? {
        guard let events = answer.firstRange(of: Array(#""events""#.utf8)) else { return nil }
        var index = events.upperBound
        while index < answer.count {
            if answer[index] == 10, answer[index - 1] != 13 { return index + 1 }
            index += 1
        }
        return nil
    }

    private func connectUpstream() -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(upstreamPort).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    private func receive(_ descriptor: Int32) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        guard count > 0 else { return nil }
        return Array(chunk[..<count])
    }
}
