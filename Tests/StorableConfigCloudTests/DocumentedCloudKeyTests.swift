import Testing

@testable import StorableConfigCloud

/// The key mapping as Docs/CloudSync.md gives it: a value synced by one version must be found by every later
/// one, so the mapping of a long key may never change.
struct DocumentedCloudKeyTests {
    @Test func theDocumentedLongKeyMapsToTheDocumentedCloudKey() {
        let key = "com.example.myapplication.NotificationPreferencesConfig.remindersForWeekendMornings"
        #expect(key.utf8.count == 83)
        let cloudKey = CloudLimits.cloudKey(for: key)
        #expect(cloudKey == "~59b517aa8939580f.nPreferencesConfig.remindersForWeekendMornings")
        #expect(cloudKey.utf8.count == CloudLimits.keyBytes)
    }

    @Test func aKeyOfAtMost64BytesIsItsOwnCloudKey() {
        let key = String(repeating: "k", count: 64)
        #expect(CloudLimits.cloudKey(for: key) == key)
        #expect(CloudLimits.cloudKey(for: key + "k").hasPrefix("~"))
    }

    @Test func theHashIsFNV1aOf64BitsAsItsSpecificationGivesIt() {
        // Test vectors of the FNV specification (draft-eastlake-fnv), not values this code computed.
        #expect(CloudLimits.fnv1a("") == 0xcbf2_9ce4_8422_2325)
        #expect(CloudLimits.fnv1a("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(CloudLimits.fnv1a("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test func theEndOfAMappedKeyIsCutAtACharacterBoundary() {
        let key = "com.example.app.SettingsConfig." + String(repeating: "あ", count: 30)
        let cloudKey = CloudLimits.cloudKey(for: key)
        #expect(cloudKey.utf8.count <= CloudLimits.keyBytes)
        #expect(cloudKey.utf8.count >= CloudLimits.keyBytes - 2)
        #expect(key.hasSuffix(cloudKey.dropFirst(18)))
    }
}
