import Foundation
import StorableConfig

@testable import StorableConfigEtcd

/// The check of the `etcd-answer` fuzz target (Fuzz/Targets/EtcdAnswerTarget.swift), also run by `swift test`
/// over its seed corpus and every input that ever failed it: the JSON in etcd's answers, as a network peer
/// sends it.
///
/// The input is taken as an answer's body (to a read of the prefix, a transaction, an error) and as a watch's
/// stream, split into pieces of 1 to 64 bytes (the input's first byte says which).
/// - Decoding never crashes or hangs; an error status always gives ``EtcdClient/ServerError``; the request for
///   the next watch, after the highest revision the stream named, is made.
/// - The watch's lines, joined again with what is left after the last newline, are the stream's bytes.
/// - A key and a value made of the input's bytes, in a well-formed read answer and in a watch event, come
///   back as the same key, text and revision.
enum EtcdAnswerFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        for prefix in ["", "app/"] {
            if let answer = try? EtcdClient.answer(status: 200, body: input) {
                _ = try? EtcdAnswer.range(answer, prefix: prefix)
                _ = try? EtcdAnswer.freshEntries(answer, prefix: prefix)
                _ = EtcdClient.int(answer["succeeded"])
            }
        }
        do {
            _ = try EtcdClient.answer(status: 503, body: input)
            return "an answer with status 503 did not throw"
        } catch let error as EtcdClient.ServerError {
            guard error.status == 503 else { return "an answer with status 503 threw \(error)" }
        } catch {
            return "an answer with status 503 threw \(error)"
        }
        if let problem = watchFailure(input) { return problem }
        return roundTripFailure(input)
    }

    private static func watchFailure(_ input: Data) -> String? {
        let pieceSize = Int((input.first ?? 0) % 64) + 1
        var lines = WatchLines()
        var joined: [UInt8] = []
        // The revision a watch would resume after, as EtcdStorage keeps it.
        var revision: Int64 = 0
        var offset = input.startIndex
        while offset < input.endIndex {
            let end = min(offset + pieceSize, input.endIndex)
            do {
                try lines.append(Array(input[offset..<end]))
            } catch {
                return "a stream of \(input.count) bytes has a line over the limit: \(error)"
            }
            offset = end
            while let line = lines.next() {
                joined += line + [10]
                switch WatchMessage(line: line) {
                case .events(let events, let headerRevision):
                    for event in events {
                        if let change = try? EtcdAnswer.change(in: event, prefix: "app/", atMost: headerRevision) {
                            revision = max(revision, change.revision)
                        }
                    }
                    revision = max(revision, headerRevision)
                case .progress(let headerRevision):
                    revision = max(revision, headerRevision)
                default:
                    break
                }
                _ = EtcdWatcher.watchRequest(prefix: "app/", after: revision)
            }
        }
        joined += lines.remainder
        return joined.elementsEqual(input) ? nil : "the watch's lines are not the stream's bytes"
    }

    /// A key and value made of the input (split at its first NUL byte), in well-formed answers.
    private static func roundTripFailure(_ input: Data) -> String? {
        let parts = input.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        let settingKey = String(decoding: parts[0], as: UTF8.self)
        let key = "app/" + settingKey
        let value = String(decoding: parts.count > 1 ? parts[1] : Data(), as: UTF8.self)
        let kv: [String: Any] = [
            "key": EtcdClient.base64(key), "value": EtcdClient.base64(value), "mod_revision": "5",
            "create_revision": "2", "version": "3",
        ]
        let range: [String: Any] = ["header": ["revision": "7", "raft_term": "2"], "kvs": [kv], "count": "1"]
        guard let rangeBody = try? JSONSerialization.data(withJSONObject: range),
            let answer = try? EtcdClient.answer(status: 200, body: rangeBody)
        else { return "a well-formed read answer does not decode" }
        guard let (revision, entries) = try? EtcdAnswer.range(answer, prefix: "app/") else {
            return "a well-formed read answer is refused"
        }
        guard revision == 7, entries.count == 1, let entry = entries.first?.value,
            entry.key.utf8.elementsEqual(settingKey.utf8), entry.value == .text(value), entry.revision == 5
        else { return "a well-formed read answer decodes as \(revision), \(entries)" }

        let event: [String: Any] = ["result": ["header": ["revision": "9"], "events": [["kv": kv]]]]
        guard let eventLine = try? JSONSerialization.data(withJSONObject: event),
            case .events(let events, let headerRevision) = WatchMessage(line: eventLine), headerRevision == 9,
            events.count == 1, let change = try? EtcdAnswer.change(in: events[0], prefix: "app/", atMost: 9)
        else { return "a well-formed watch event does not decode" }
        guard change.key.utf8.elementsEqual(settingKey.utf8), change.value == .text(value), change.revision == 5
        else { return "a well-formed watch event decodes as \(change)" }
        return nil
    }
}
