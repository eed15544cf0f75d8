import Foundation

@testable import StorableConfigEtcd

/// The check of the `etcd-response` fuzz target (Fuzz/Targets/EtcdResponseTarget.swift), also run by
/// `swift test` over its seed corpus and every input that ever failed it: HTTP/1.1 answers as a network peer
/// sends them to ``HTTPResponseReader``, split into reads of 1 to 64 bytes (the input's first byte says which).
///
/// - Any bytes give a status from 100 to 999 or an error, never a crash, a hang, or more body than was sent.
/// - The input (after its first byte) as the body of a well-formed answer, with a length, chunked with
///   trailers, or up to the end of the stream, comes back whole.
enum EtcdResponseFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let seed = input.first ?? 0
        let pieceSize = Int(seed % 64) + 1
        let stream = Array(input.dropFirst())
        var reader = HTTPResponseReader(receive: pieces(of: stream, size: pieceSize))
        var bodyCount = 0
        if let status = try? reader.readResponse(onData: { bodyCount += $0.count }), !(100...999).contains(status) {
            return "the status \(status) was taken"
        }
        if bodyCount > stream.count { return "a body of \(bodyCount) bytes from \(stream.count) bytes" }
        for (form, answer) in wellFormedAnswers(body: stream, seed: Int(seed)) {
            var reader = HTTPResponseReader(receive: pieces(of: answer, size: pieceSize))
            var body: [UInt8] = []
            var head: Int?
            do {
                let status = try reader.readResponse(onHead: { head = $0 }, onData: { body += $0 })
                guard status == 200, head == 200 else { return "a well-formed \(form) answer reads as \(status)" }
            } catch {
                return "a well-formed \(form) answer fails: \(error)"
            }
            if body != stream { return "a well-formed \(form) answer's body reads back as \(body.count) other bytes" }
        }
        return nil
    }

    /// A receive function that returns `bytes` `size` at a time, then `nil`.
    static func pieces(of bytes: [UInt8], size: Int) -> () throws -> [UInt8]? {
        let position = Position()
        return {
            guard position.offset < bytes.count else { return nil }
            let end = min(position.offset + size, bytes.count)
            defer { position.offset = end }
            return Array(bytes[position.offset..<end])
        }
    }

    private final class Position {
        var offset = 0
    }

    /// `body` as etcd's gateway could send it: with a Content-Length, chunked (chunks of 1 to 97 bytes, sizes
    /// in lower- or upper-case hexadecimal, an extension, trailers), and up to the end of the stream.
    private static func wellFormedAnswers(body: [UInt8], seed: Int) -> [(String, [UInt8])] {
        let status = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Tue, 25 Nov 2026 04:44:07 GMT\r\n"
        var chunked = Array((status + "Transfer-Encoding: chunked\r\nTrailer: Grpc-Trailer-Status\r\n\r\n").utf8)
        var offset = 0
        var size = seed % 97 + 1
        while offset < body.count {
            let end = min(offset + size, body.count)
            let hex = String(end - offset, radix: 16, uppercase: size % 2 == 0)
            chunked +=
                Array((hex + (size % 3 == 0 ? ";name=value" : "") + "\r\n").utf8) + body[offset..<end] + [13, 10]
            offset = end
            size = size * 7 % 97 + 1
        }
        chunked += Array("0\r\nGrpc-Trailer-Status: 0\r\n\r\n".utf8)
        return [
            ("Content-Length", Array((status + "Content-Length: \(body.count)\r\n\r\n").utf8) + body),
            ("chunked", chunked),
            ("unframed", Array((status + "Connection: close\r\n\r\n").utf8) + body),
        ]
    }
}
