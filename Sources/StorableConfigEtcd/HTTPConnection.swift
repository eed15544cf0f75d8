import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A plain HTTP/1.1 exchange over a socket: what etcd's JSON gateway needs, and no more.
///
/// Not URLSession: on Linux, corelibs FoundationNetworking stops the process ("Transfer completed, but there's no
/// response") when a response carries trailers, and etcd's gateway sends every error (a wrong password, no
/// leader, a request too large) with a `Trailer` header. Plain `http://` endpoints only.
final class HTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private let deadline: () -> TimeInterval

    /// Connects to `url`'s host and port within `timeout`.
    init(to url: URL, timeout: TimeInterval, idleTimeout: @escaping () -> TimeInterval) throws {
        guard url.scheme == "http", let host = url.host else {
            throw Failure(description: "\(url.absoluteString) is not an http:// endpoint")
        }
        let port = url.port ?? 2379
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var connected: Int32 = -1
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate, connected < 0 {
            candidate = info.pointee.ai_next
            let socketDescriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard socketDescriptor >= 0 else { continue }
            let flags = fcntl(socketDescriptor, F_GETFL)
            _ = fcntl(socketDescriptor, F_SETFL, flags | O_NONBLOCK)
            let started = connect(socketDescriptor, info.pointee.ai_addr, info.pointee.ai_addrlen)
            var failure = started == 0 ? 0 : errno
            if failure == EINPROGRESS {
                failure =
                    Self.wait(socketDescriptor, events: Int16(POLLOUT), timeout: timeout)
                    ? Self.socketError(socketDescriptor) : ETIMEDOUT
            }
            if failure == 0 {
                connected = socketDescriptor
            } else {
                lastError = String(cString: strerror(failure))
                close(socketDescriptor)
            }
        }
        guard connected >= 0 else { throw Failure(description: "cannot connect to \(host):\(port): \(lastError)") }
        descriptor = connected
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        deadline = idleTimeout
    }

    deinit {
        close(descriptor)
    }

    /// Ends the exchange from another thread: a read in progress fails at once.
    func shutdownNow() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private static func socketError(_ descriptor: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { return errno }
        return error
    }

    private static func wait(_ descriptor: Int32, events: Int16, timeout: TimeInterval) -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(max(0, min(timeout, 86_400)) * 1000)
        return poll(&entry, 1, milliseconds) == 1
    }

    /// Sends a POST of `body` to `path`.
    func sendPost(host: String, path: String, body: Data, headers: [String: String]) throws {
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8) + Array(body)
        var sent = 0
        while sent < bytes.count {
            guard Self.wait(descriptor, events: Int16(POLLOUT), timeout: deadline()) else {
                throw Failure(description: "timed out sending the request")
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                #if canImport(Darwin)
                    send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, 0)
                #else
                    send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                #endif
            }
            guard count > 0 else { throw Failure(description: "the connection closed while sending") }
            sent += count
        }
    }

    /// The next bytes the peer sent, or `nil` at the end of the stream.
    private func receive() throws -> [UInt8]? {
        guard Self.wait(descriptor, events: Int16(POLLIN), timeout: deadline()) else {
            throw Failure(description: "no answer in time")
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        if count < 0 { throw Failure(description: String(cString: strerror(errno))) }
        if count == 0 { return nil }
        chunk.removeSubrange(count...)
        return chunk
    }

    /// Reads the status and headers, then hands the body to `onData` as it arrives (chunk by chunk for a
    /// chunked body, whose trailers are skipped), and returns the status. See ``HTTPResponseReader``.
    func readResponse(onHead: (Int) -> Void = { _ in }, onData: ([UInt8]) -> Void) throws -> Int {
        var reader = HTTPResponseReader { [self] in try receive() }
        return try reader.readResponse(onHead: onHead, onData: onData)
    }

    /// One POST and its whole answer, all of it by `end`: the connection, the request and the answer.
    static func post(
        _ url: URL, path: String, body: Data, headers: [String: String], until end: Date
    ) throws -> (status: Int, body: Data) {
        let remaining = { max(0, end.timeIntervalSinceNow) }
        let connection = try HTTPConnection(to: url, timeout: remaining(), idleTimeout: remaining)
        let host = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        try connection.sendPost(host: host, path: path, body: body, headers: headers)
        var data = Data()
        let status = try connection.readResponse { data.append(contentsOf: $0) }
        return (status, data)
    }
}
