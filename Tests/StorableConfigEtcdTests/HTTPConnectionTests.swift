import Foundation
import Testing

@testable import StorableConfigEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a peer on the network may send back, over a real socket: no answer, however malformed, stops the
/// program or makes it read without end. Found by the `etcd-response` fuzz target (Docs/Fuzzing.md).
struct HTTPConnectionTests {
    /// Answers the one connection it accepts with `answer`, after reading the request, then closes it.
    static func post(answeredWith answer: [UInt8]) throws -> (status: Int, body: Data) {
        let (listener, port) = EtcdCluster.silentListener()
        let server = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 65_536)
            _ = recv(connection, &request, request.count, 0)
            var sent = 0
            while sent < answer.count {
                let count = answer[sent...].withUnsafeBytes { send(connection, $0.baseAddress!, $0.count, 0) }
                guard count > 0 else { break }
                sent += count
            }
            close(connection)
        }
        server.start()
        defer { close(listener) }
        return try HTTPConnection.post(
            URL(string: "http://127.0.0.1:\(port)")!, path: "/v3/kv/range", body: Data("{}".utf8), headers: [],
            until: Date().addingTimeInterval(10))
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nhello",
        "HTTP/1.1 -200 OK\r\nContent-Length: 0\r\n\r\n",
    ])
    func aBadLengthOrStatusIsAnErrorNotACrash(answer: String) {
        #expect(throws: (any Error).self) { try Self.post(answeredWith: Array(answer.utf8)) }
    }

    @Test func aHeadLineLongerThanTheLimitIsRefusedWithoutReadingItAll() {
        let line = "X-Filler: " + String(repeating: "a", count: HTTPResponseReader.maximumLineLength + 10)
        let answer = "HTTP/1.1 200 OK\r\n\(line)\r\nContent-Length: 2\r\n\r\n{}"
        #expect {
            try Self.post(answeredWith: Array(answer.utf8))
        } throws: { error in
            "\(error)".contains("longer than")
        }
    }

    @Test func aChunkedBodyWithExtensionsAndTrailersComesBackWhole() throws {
        let answer =
            "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\nTrailer: Grpc-Trailer-Status\r\n\r\n"
            + "5;name=value\r\n{\"err\r\nA\r\nor\":\"bad\"}\r\n0\r\nGrpc-Trailer-Status: 3\r\n\r\n"
        let (status, body) = try Self.post(answeredWith: Array(answer.utf8))
        #expect(status == 400)
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":"bad"}"#)
    }

    /// A quiet watch sends nothing for minutes: the kernel's keepalive is what finds a host that vanished.
    @Test func connectionsAskTheKernelToProbeAQuietPeer() throws {
        let (listener, port) = EtcdCluster.silentListener()
        defer { close(listener) }
        let stream = try SocketStream(
            host: "127.0.0.1", port: port, before: ContinuousClock.now + .seconds(5))
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(stream.descriptor, SOL_SOCKET, SO_KEEPALIVE, &value, &length) == 0)
        #expect(value == 1)
        #if canImport(Glibc)
            #expect(getsockopt(stream.descriptor, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &value, &length) == 0)
            #expect(value == 30)
        #endif
    }
}
