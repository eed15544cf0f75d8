import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening socket on 127.0.0.1 that serves each connection it accepts on a thread of its own: what the tests'
/// fake member and proxy stand on. ``stop()`` shuts down the listener and every socket registered with it (each
/// accepted connection is, until it is served and closed).
final class LoopbackListener: @unchecked Sendable {
    let port: Int

    private let listener: Int32
    private let state = Locked<(stopped: Bool, sockets: [Int32])>((false, []))

    /// Listens on a free port; connections wait in the queue until ``start(serving:)``.
    init() {
        (listener, port) = EtcdCluster.silentListener()
    }

    /// Calls `serve` with each connection, on a thread of its own; the connection is closed when `serve` returns.
    func start(serving serve: @escaping @Sendable (Int32) -> Void) {
        let thread = Thread { [self] in acceptLoop(serve) }
        thread.start()
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        let sockets = state.withLock { state -> [Int32] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.sockets
        }
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Adds `socket` to those that ``stop()`` shuts down; `false` if the listener is already stopped. Unregister it
    /// before closing it.
    func register(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.sockets.append(socket)
            return true
        }
    }

    func unregister(_ socket: Int32) {
        state.withLock { $0.sockets.removeAll { $0 == socket } }
    }

    private func acceptLoop(_ serve: @escaping @Sendable (Int32) -> Void) {
        defer { close(listener) }
        while !isStopped {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            guard register(connection) else {
                close(connection)
                return
            }
            let thread = Thread { [self] in
                serve(connection)
                unregister(connection)
                close(connection)
            }
            thread.start()
        }
    }

    /// Sends all of `bytes`; `false` if the peer went away.
    static func send(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                #if canImport(Darwin)
                    Darwin.send(socket, $0.baseAddress!, $0.count, 0)
                #else
                    Glibc.send(socket, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
                #endif
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
