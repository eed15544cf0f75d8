/// A connected byte stream to one etcd endpoint: a TCP socket, or TLS over one.
///
/// Every call is bounded by a deadline on the monotonic clock: a peer that sends nothing, or sends slowly,
/// cannot hold a caller past it. ``HTTPConnection`` speaks HTTP/1.1 over any stream.
@available(watchOS, unavailable)
protocol ByteStream: AnyObject {
    /// Writes every byte of `bytes`, or throws ``TransportFailure`` (the deadline passed, the peer closed).
    func write(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws

    /// Waits until bytes arrive or `deadline` passes, and returns at most `maximum` of them; an empty array
    /// when the peer closed the stream.
    /// - Throws: ``TransportFailure`` when the deadline passes first or the stream fails.
    func read(atMost maximum: Int, before deadline: ContinuousClock.Instant) throws -> [UInt8]

    /// Whether the stream can still carry a request: `false` once the peer closed it, sent bytes that no request
    /// asked for, or it failed. Asked before a kept connection is used again; never waits.
    var isReusable: Bool { get }

    /// Ends the stream from another thread: a read or write in progress fails at once.
    func shutdownNow()
}

/// Why a stream or an exchange over it failed, in words for the user.
@available(watchOS, unavailable)
struct TransportFailure: Error, CustomStringConvertible {
    let description: String
}
