import Foundation

/// The blocks of a PEM file (RFC 7468): `-----BEGIN <label>-----`, base64 lines, `-----END <label>-----`, with
/// any text around the blocks (as `openssl x509 -text` leaves) ignored.
///
/// On Apple platforms the CA file is read here, as the system takes certificates in DER only; OpenSSL reads it on
/// Linux. The parser is the same on every platform, so it is tested and fuzzed here (the `etcd-pem` fuzz target).
@available(watchOS, unavailable)
enum PEM {
    /// One block: its label (`CERTIFICATE`) and its bytes (DER).
    struct Block: Equatable {
        let label: String
        let bytes: [UInt8]
    }

    /// Why a file is not PEM, with the line (from 1) where that shows.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    /// The longest label taken; RFC 7468's are a few words.
    static let maximumLabelLength = 64

    /// Every block of `text`, in order.
    /// - Throws: ``Problem`` for a block that is not closed, closed with another label, or not base64, and for
    ///   text with no block at all.
    static func blocks(in text: [UInt8]) throws(Problem) -> [Block] {
        var blocks: [Block] = []
        var open: (label: String, line: Int, body: [UInt8])?
        var number = 0
        for rawLine in text.split(separator: 10, omittingEmptySubsequences: false) {
            number += 1
            let line = trimmed(rawLine)
            if let label = label(of: line, boundary: "BEGIN") {
                if let open {
                    throw Problem(
                        line: number, reason: "a BEGIN inside the \(open.label) block begun on line \(open.line)")
                }
                open = (label, number, [])
            } else if let label = label(of: line, boundary: "END") {
                guard let block = open else {
                    throw Problem(line: number, reason: "an END \(label) with no BEGIN before it")
                }
                guard label == block.label else {
                    throw Problem(
                        line: number, reason: "END \(label) closes the \(block.label) block begun on line \(block.line)"
                    )
                }
                guard let bytes = Data(base64Encoded: Data(block.body)), !bytes.isEmpty else {
                    throw Problem(
                        line: block.line, reason: "the \(block.label) block begun here is not base64 (or is empty)")
                }
                blocks.append(Block(label: label, bytes: Array(bytes)))
                open = nil
            } else if open != nil {
                // Spaces and tabs within a line are allowed (RFC 7468's lax parsing); nothing else is skipped.
                open?.body += line.filter { $0 != 32 && $0 != 9 }
            }
        }
        if let open {
            throw Problem(line: open.line, reason: "the \(open.label) block begun here has no END line")
        }
        guard !blocks.isEmpty else {
            throw Problem(line: max(number, 1), reason: "no -----BEGIN ...----- line: this is not PEM")
        }
        return blocks
    }

    /// The label of `line` if it is `-----<boundary> <label>-----`.
    private static func label(of line: ArraySlice<UInt8>, boundary: String) -> String? {
        let start = Array("-----\(boundary) ".utf8)
        let end = Array("-----".utf8)
        guard line.count >= start.count + end.count, line.starts(with: start), line.suffix(end.count).elementsEqual(end)
        else { return nil }
        let label = line.dropFirst(start.count).dropLast(end.count)
        guard !label.isEmpty, label.count <= maximumLabelLength, label.allSatisfy({ (32...126).contains($0) })
        else { return nil }
        return String(decoding: label, as: UTF8.self)
    }

    /// `line` without the spaces, tabs and carriage return around it.
    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let blank: Set<UInt8> = [32, 9, 13]
        guard let first = line.firstIndex(where: { !blank.contains($0) }),
            let last = line.lastIndex(where: { !blank.contains($0) })
        else { return [] }
        return line[first...last]
    }

    /// `blocks` as PEM text, base64 in lines of 64: what ``blocks(in:)`` reads back.
    static func text(of blocks: [Block]) -> String {
        blocks.map { block in
            let base64 = Data(block.bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN \(block.label)-----\n\(base64)\n-----END \(block.label)-----\n"
        }.joined()
    }
}
