import Foundation
import Testing

@testable import StorableConfigEtcd

/// What etcd's answers hold comes from the network, and is not trusted.
struct EtcdAnswerTests {
    /// A revision of Int64.max in a watch event (from a peer that is not etcd, or a corrupt one) made the next
    /// watch's request add one to it, which stopped the program.
    @Test func theLargestRevisionDoesNotStopTheNextWatch() throws {
        let request = EtcdWatcher.watchRequest(prefix: "app/", after: .max)
        let create = try #require(request["create_request"] as? [String: Any])
        #expect(create["start_revision"] as? String == String(Int64.max))
        #expect(
            (EtcdWatcher.watchRequest(prefix: "app/", after: 41)["create_request"] as? [String: Any])?[
                "start_revision"] as? String == "42")
    }

    /// Found by the `etcd-answer` fuzz target: the prefix was matched and cut off by characters, so a key whose
    /// name after the prefix starts with a combining mark ("app/" + U+0317) was taken for a key outside the
    /// prefix and never read, and the same key in a read of several keys lost its mark.
    @Test func aKeyUnderThePrefixIsFoundByItsBytes() throws {
        let fullKey = "app/\u{317}name"
        let kv: [String: Any] = [
            "key": EtcdClient.base64(fullKey), "value": EtcdClient.base64("1"), "mod_revision": "5",
        ]
        let (_, entries) = try EtcdAnswer.range(["header": ["revision": "7"], "kvs": [kv]], prefix: "app/")
        #expect(entries.keys.map { Array($0.unicodeScalars) } == [Array("\u{317}name".unicodeScalars)])
        let change = try #require(try EtcdAnswer.change(in: ["kv": kv], prefix: "app/", atMost: 7))
        #expect(Array(change.key.unicodeScalars) == Array("\u{317}name".unicodeScalars))
        let values = try EtcdAnswer.freshEntries(
            ["header": ["revision": "7"], "responses": [["response_range": ["kvs": [kv]]]]], prefix: "app/")
        #expect(values.keys.map { Array($0.unicodeScalars) } == [Array("\u{317}name".unicodeScalars)])
        // A key that only looks as if it were under the prefix is not.
        #expect(
            try EtcdAnswer.change(
                in: ["kv": ["key": EtcdClient.base64("apq/x"), "mod_revision": "3"]], prefix: "app/", atMost: 7)
                == nil)
    }
}

/// Values and answers that etcd would not send are reported for what they are.
extension EtcdAnswerTests {
    @Test func aValueThatIsNotUTF8OrNotBase64IsReportedForWhatItIs() throws {
        let notUTF8: [String: Any] = [
            "key": EtcdClient.base64("app/a"), "value": Data([0x61, 0xFF, 0x62]).base64EncodedString(),
            "mod_revision": "3",
        ]
        let notBase64: [String: Any] = ["key": EtcdClient.base64("app/b"), "value": "%%%", "mod_revision": "3"]
        let (_, entries) = try EtcdAnswer.range(
            ["header": ["revision": "4"], "kvs": [notUTF8, notBase64]], prefix: "app/")
        guard case .unreadable(let first) = entries["a"]?.value, case .unreadable(let second) = entries["b"]?.value
        else {
            Issue.record("both values were taken as text: \(entries)")
            return
        }
        #expect(first.contains("app/a") && first.contains("not UTF-8"))
        #expect(second.contains("app/b") && second.contains("not base64"))
    }

    @Test func anAnswerEtcdWouldNotSendIsRefusedWhole() {
        let kv: [String: Any] = [
            "key": EtcdClient.base64("app/a"), "value": EtcdClient.base64("1"), "mod_revision": "9",
        ]
        for answer: [String: Any] in [
            [:], ["header": ["revision": ["x": 1]]], ["header": ["revision": "-3"]],
            ["header": ["revision": "4"], "kvs": "nope"],
            // A key changed after the revision the answer is at.
            ["header": ["revision": "4"], "kvs": [kv]],
            ["header": ["revision": "12"], "kvs": [["key": "%%%", "mod_revision": "3"]]],
        ] {
            #expect(throws: EtcdAnswer.Malformed.self) { try EtcdAnswer.range(answer, prefix: "app/") }
        }
        #expect(throws: (any Error).self) { try EtcdClient.answer(status: 200, body: Data("<html>hello</html>".utf8)) }
    }

    @Test func aWatchLineIsCutAtItsLimitAndTheBodyAtTheAnswersLimit() throws {
        var lines = WatchLines()
        let piece = [UInt8](repeating: 97, count: 1 << 20)
        var thrown = false
        for _ in 0...(WatchLines.maximumLineLength >> 20) where !thrown {
            do { try lines.append(piece) } catch { thrown = true }
        }
        #expect(thrown)
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world".utf8)
        var sent = false
        var reader = HTTPResponseReader(maximumBody: 10) {
            defer { sent = true }
            return sent ? nil : answer
        }
        #expect(throws: HTTPResponseReader.Failure.self) { try reader.readResponse(onData: { _ in }) }
    }
}
