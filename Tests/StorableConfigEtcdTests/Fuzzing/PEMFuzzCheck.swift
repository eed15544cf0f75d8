import Foundation

@testable import StorableConfigEtcd

/// The check of the `etcd-pem` fuzz target (Fuzz/Targets/PEMTarget.swift), also run by `swift test` over its seed
/// corpus and every input that ever failed it: a CA file's text, as an operator's file or a hostile one holds.
///
/// - Reading never crashes or hangs; what it reads is whole blocks: each label printable ASCII, each body not
///   empty, and the blocks written again as PEM read back the same.
/// - One to three blocks made of the input's bytes, written as PEM with lines of 4 to 76 characters, LF or CRLF
///   line ends, spaces inside the lines or not, and explanatory text around them that starts no boundary, read
///   back as exactly those blocks.
enum PEMFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let bytes = Array(input)
        if let blocks = try? PEM.blocks(in: bytes) {
            for block in blocks {
                guard !block.bytes.isEmpty, !block.label.isEmpty,
                    block.label.utf8.allSatisfy({ (32...126).contains($0) })
                else {
                    return "a block was read with label \(block.label.debugDescription), \(block.bytes.count) bytes"
                }
            }
            guard (try? PEM.blocks(in: Array(PEM.text(of: blocks).utf8))) == blocks else {
                return "\(blocks.count) blocks written as PEM did not read back the same"
            }
        }
        return roundTripFailure(bytes)
    }

    /// Blocks made of the input's bytes, written as PEM in the ways files have it, read back exactly.
    private static func roundTripFailure(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 4 else { return nil }
        let count = Int(bytes[0] % 3) + 1
        let width = (Int(bytes[1] % 19) + 1) * 4
        let lineEnd = bytes[2] & 1 == 0 ? "\n" : "\r\n"
        let innerSpaces = bytes[2] & 2 != 0
        let body = Array(bytes.dropFirst(3))
        guard body.count >= count else { return nil }
        // The body split into `count` parts, none empty; each labelled by its first bytes, in A to Z.
        let size = body.count / count
        let blocks = (0..<count).map { index in
            let part = Array(body[(index * size)..<(index == count - 1 ? body.count : (index + 1) * size)])
            let label = String(decoding: part.prefix(8).map { 65 + $0 % 26 }, as: UTF8.self)
            return PEM.Block(label: label, bytes: part)
        }
        // Explanatory text before, between and after the blocks: the body's bytes without '-' or line ends.
        let around = String(decoding: body.filter { $0 != 45 && $0 != 10 && $0 != 13 }.prefix(40), as: UTF8.self)
        var text = around + lineEnd
        for block in blocks {
            let base64 = Array(Data(block.bytes).base64EncodedString().utf8)
            let lines = stride(from: 0, to: base64.count, by: width).map { start in
                var line = Array(base64[start..<min(start + width, base64.count)])
                if innerSpaces, line.count > 1 { line.insert(32, at: line.count / 2) }
                return String(decoding: line, as: UTF8.self)
            }
            text += "-----BEGIN \(block.label)-----" + lineEnd + lines.joined(separator: lineEnd) + lineEnd
            text += "-----END \(block.label)-----" + lineEnd + around + lineEnd
        }
        guard let read = try? PEM.blocks(in: Array(text.utf8)) else {
            return "\(count) blocks of \(body.count) bytes in lines of \(width), written as PEM, were refused"
        }
        guard read == blocks else {
            return "\(count) blocks of \(body.count) bytes in lines of \(width) read back as \(read.count) other blocks"
        }
        return nil
    }
}
