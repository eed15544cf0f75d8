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
        let (_, entries) = EtcdStorage.entries(in: ["header": ["revision": "7"], "kvs": [kv]], prefix: "app/")
        #expect(entries.keys.map { Array($0.unicodeScalars) } == [Array("\u{317}name".unicodeScalars)])
        let change = try #require(EtcdStorage.change(in: ["kv": kv], prefix: "app/"))
        #expect(Array(change.key.unicodeScalars) == Array("\u{317}name".unicodeScalars))
        let (values, _) = try EtcdStorage.freshValues(
            in: ["responses": [["response_range": ["kvs": [kv]]]]], prefix: "app/")
        #expect(values.keys.map { Array($0.unicodeScalars) } == [Array("\u{317}name".unicodeScalars)])
        // A key that only looks as if it were under the prefix is not.
        #expect(EtcdStorage.change(in: ["kv": ["key": EtcdClient.base64("apq/x")]], prefix: "app/") == nil)
    }
}
