import Foundation
import Testing

@testable import StorableConfigCloud

/// The translation of `NSUbiquitousKeyValueStore.didChangeExternallyNotification`'s user info into the
/// `CloudChange` that `CloudSync` acts on: the part of the Apple adapter that does not need Apple's types.
struct UbiquitousMappingTests {
    // The constants' names; Linux's Foundation has not the constants themselves, and the translation takes the
    // keys as parameters.
    let reasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
    let changedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"

    func change(_ userInfo: [AnyHashable: Any], allKeys: [String] = ["every.key"]) -> CloudChange {
        CloudChange(
            ubiquitousUserInfo: userInfo, reasonKey: reasonKey, changedKeysKey: changedKeysKey, allKeys: { allKeys })
    }

    @Test(arguments: [
        (0, CloudChange.Reason.serverChange), (1, .initialSyncChange), (2, .quotaViolationChange), (3, .accountChange),
    ])
    func eachDocumentedReasonNumberIsItsReason(number: Int, reason: CloudChange.Reason) {
        // As the notification carries it: an NSNumber, with the changed keys as an NSArray of strings.
        let userInfo: [AnyHashable: Any] = [
            reasonKey: NSNumber(value: number), changedKeysKey: NSArray(array: ["a.b", "~0123456789abcdef.c"]),
        ]
        #expect(change(userInfo) == CloudChange(reason: reason, keys: ["a.b", "~0123456789abcdef.c"]))
    }

    @Test func aNoticeWithoutAReasonOrWithAnUnknownOneIsAServerChange() {
        #expect(change([changedKeysKey: ["a.b"]]) == CloudChange(reason: .serverChange, keys: ["a.b"]))
        for unknown in [4, -1, 99] {
            let userInfo: [AnyHashable: Any] = [reasonKey: NSNumber(value: unknown), changedKeysKey: ["a.b"]]
            #expect(change(userInfo) == CloudChange(reason: .serverChange, keys: ["a.b"]))
        }
        #expect(CloudChange.Reason(ubiquitousReason: 4) == nil)
    }

    @Test func aNoticeWithoutKeysConcernsEveryKey() {
        let userInfo: [AnyHashable: Any] = [reasonKey: NSNumber(value: 2)]
        #expect(
            change(userInfo, allKeys: ["a.b", "c.d"])
                == CloudChange(reason: .quotaViolationChange, keys: ["a.b", "c.d"]))
        #expect(change([:], allKeys: ["a.b"]) == CloudChange(reason: .serverChange, keys: ["a.b"]))
    }

    @Test func keysThatAreNotStringsAreNotTakenForKeys() {
        let userInfo: [AnyHashable: Any] = [reasonKey: NSNumber(value: 0), changedKeysKey: "a.b"]
        #expect(change(userInfo, allKeys: ["x.y"]) == CloudChange(reason: .serverChange, keys: ["x.y"]))
    }

    #if canImport(Darwin)
        // Compiled only where Foundation has the constants; there it checks the numbers above against them.
        @Test func theReasonNumbersAreFoundationsConstants() {
            #expect(CloudChange.Reason(ubiquitousReason: NSUbiquitousKeyValueStoreServerChange) == .serverChange)
            #expect(
                CloudChange.Reason(ubiquitousReason: NSUbiquitousKeyValueStoreInitialSyncChange) == .initialSyncChange)
            #expect(
                CloudChange.Reason(ubiquitousReason: NSUbiquitousKeyValueStoreQuotaViolationChange)
                    == .quotaViolationChange)
            #expect(CloudChange.Reason(ubiquitousReason: NSUbiquitousKeyValueStoreAccountChange) == .accountChange)
        }
    #endif
}
