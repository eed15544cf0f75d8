import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A TCP connection, non-blocking, every wait bounded by `poll`.
@available(watchOS, unavailable)
final class SocketStream: ByteStream {
    /// The socket; TLS runs over it.
    let descriptor: Int32

    /// Connects to `host` and `port`, trying each address in turn, all before `deadline`.
    init(host: String, port: Int, before deadline: ContinuousClock.Instant) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw TransportFailure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var connected: Int32 = -1
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate, connected < 0 {
            candidate = info.pointee.ai_next
            let socketDescriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard socketDescriptor >= 0 else {
                // No descriptor left (EMFILE under a low `ulimit -n`), or no such family: said, not "no address".
                lastError = String(cString: strerror(errno))
                continue
            }
            let flags = fcntl(socketDescriptor, F_GETFL)
            _ = fcntl(socketDescriptor, F_SETFL, flags | O_NONBLOCK)
            let started = connect(socketDescriptor, info.pointee.ai_addr, info.pointee.ai_addrlen)
            var failure = started == 0 ? 0 : errno
            if failure == EINPROGRESS {
                failure =
                    Self.wait(socketDescriptor, events: Int16(POLLOUT), before: deadline)
                    ? Self.socketError(socketDescriptor) : ETIMEDOUT
            }
            if failure == 0 {
                connected = socketDescriptor
            } else {
                lastError = String(cString: strerror(failure))
                close(socketDescriptor)
            }
        }
        guard connected >= 0 else {
            throw TransportFailure(description: "cannot connect to \(host):\(port): \(lastError)")
        }
        descriptor = connected
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        #if canImport(Darwin)
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, size)
        #endif
        // A host that is gone (powered off, cut off) is found by the kernel within about a minute of silence,
        // instead of never: a quiet watch sends nothing for minutes. (A frozen process on a live host still
        // answers keepalives from its kernel; the watch's lag check finds that.)
        setsockopt(descriptor, SOL_SOCKET, SO_KEEPALIVE, &one, size)
        #if canImport(Glibc)
            var idle: Int32 = 30
            var interval: Int32 = 10
            var probes: Int32 = 3
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)
        #endif
    }

    deinit {
        close(descriptor)
    }

    func shutdownNow() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private static func socketError(_ descriptor: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { return errno }
        return error
    }

    /// Whether `descriptor` is ready for `events` before `deadline`.
    static func wait(_ descriptor: Int32, events: Int16, before deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: min(seconds, 86_400) * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready == 1 { return true }
            if ready < 0 && errno != EINTR { return false }
        }
    }

    /// Waits for `events` on the socket before `deadline`, or throws saying what was awaited.
    func wait(for events: Int16, before deadline: ContinuousClock.Instant, _ what: String) throws {
        guard Self.wait(descriptor, events: events, before: deadline) else {
            throw TransportFailure(description: "timed out \(what)")
        }
    }

    func write(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws {
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), before: deadline, "sending the request")
            let count = bytes.withUnsafeBytes { buffer in
                #if canImport(Darwin)
                    send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, 0)
                #else
                    send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                #endif
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            guard count > 0 else { throw TransportFailure(description: "the connection closed while sending") }
            sent += count
        }
    }

    func read(atMost maximum: Int, before deadline: ContinuousClock.Instant) throws -> [UInt8] {
        while true {
            try wait(for: Int16(POLLIN), before: deadline, "waiting for the answer")
            var chunk = [UInt8](repeating: 0, count: max(1, min(maximum, 65_536)))
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if count < 0 { throw TransportFailure(description: String(cString: strerror(errno))) }
            chunk.removeSubrange(count...)
            return chunk
        }
    }

    var isReusable: Bool {
        // Idle and healthy: nothing to read, no hang-up, no error. Anything else (the peer's FIN, stray bytes)
        // means the connection must not carry another request.
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }
}
