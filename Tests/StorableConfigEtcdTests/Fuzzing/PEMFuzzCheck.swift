import Foundation

@testable import StorableConfigEtcd

/// The check of the `etcd-pem` fuzz target (Fuzz/Targets/PEMTarget.swift), also run by `swift test` over its seed
/// corpus and every input that ever failed it: a CA file's text, as an operator's file or a hostile one holds.
///
/// - Reading never crashes or hangs; what it reads is whole blocks: each label printable ASCII, each body not
///   empty, and the blocks written again as PEM read back the same.
/// - The input split into a label (its first byte says how long) and bytes, written as PEM, with the input's
///   other bytes before and after it as explanatory text that starts no boundary, reads back as that one block.
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

    private static func roundTripFailure(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.first else { return nil }
        let labelLength = Int(first) % 20 + 1
        let rest = bytes.dropFirst()
        // Printable ASCII without '-', so that the label cannot end the boundary early.
        let label = String(
            decoding: rest.prefix(labelLength).map { 65 + $0 % 26 }, as: UTF8.self)
        let body = Array(rest.dropFirst(labelLength))
        guard !body.isEmpty else { return nil }
        // Text around the block: the body's bytes with every '-' taken out, so no line is a boundary.
        let around = String(decoding: body.filter { $0 != 45 }.prefix(64), as: UTF8.self)
        let block = PEM.Block(label: label, bytes: body)
        let text = around + "\n" + PEM.text(of: [block]) + around
        guard let read = try? PEM.blocks(in: Array(text.utf8)) else {
            return "a block labelled \(label) of \(body.count) bytes, written as PEM, was refused"
        }
        guard read == [block] else {
            return "a block labelled \(label) of \(body.count) bytes read back as \(read.count)"
        }
        return nil
    }
}
