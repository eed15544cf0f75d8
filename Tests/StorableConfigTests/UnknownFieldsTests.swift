import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

// An older version of a program writes over a value that a newer version stored: the fields the older type does
// not know are kept, so that the newer version reads them again. And values with no declared default to fill
// from (an array's element, a dictionary's entry, a record) fill new fields from `FillsNewFields`.

/// A profile as version 1 knew it: `nickname` is optional, and left out when `nil`.
struct ProfileV1: Codable, Sendable, Equatable {
    var name = ""
    var nickname: String?
}

/// The same profile in version 2, which added `avatar` and a nested `privacy.showsEmail`.
struct ProfileV2: Codable, Sendable, Equatable {
    var name = ""
    var nickname: String?
    var avatar = "none"
    var privacy = Privacy()

    struct Privacy: Codable, Sendable, Equatable {
        var isPublic = true
        var showsEmail = false
    }
}

struct ProfileV1WithPrivacy: Codable, Sendable, Equatable {
    var name = ""
    var nickname: String?
    var privacy = Privacy()

    struct Privacy: Codable, Sendable, Equatable {
        var isPublic = true
    }
}

final class KeptV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Kept" }
    @Setting var profile = ProfileV1WithPrivacy()
}

final class KeptV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Kept" }
    @Setting var profile = ProfileV2()
}

final class OptionalV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Optional" }
    @Setting var profile = ProfileV1()
}

final class OptionalV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Optional" }
    @Setting var profile = ProfileV2()
}

final class ResetV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Reset" }
    @Setting var profile = ProfileV1()
}

final class ResetV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Reset" }
    @Setting var profile = ProfileV2()
}

final class ListV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "List" }
    @Setting var profiles: [ProfileV1] = []
}

final class ListV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "List" }
    @Setting var profiles: [ProfileV2] = []
}

final class ByNameV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "ByName" }
    @Setting var profiles: [String: ProfileV1] = [:]
}

final class ByNameV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "ByName" }
    @Setting var profiles: [String: ProfileV2] = [:]
}

/// A tab as version 1 stored it.
struct TabV1: Codable, Sendable, Equatable {
    var title: String
}

/// Version 2 added `isPinned`, and gives a value for it where there is no declared default.
struct TabV2: Codable, Sendable, Equatable, FillsNewFields {
    var title: String
    var isPinned = true
    static let fillForNewFields = TabV2(title: "untitled", isPinned: true)
}

final class TabsV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Tabs" }
    @Setting var tabs: [TabV1] = []
    @Setting var named: [String: TabV1] = [:]
}

final class TabsV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Tabs" }
    @Setting var tabs: [TabV2] = []
    @Setting var named: [String: TabV2] = [:]
}

final class BadTabs: EvolvingConfig, @unchecked Sendable {
    @Setting var tabs: [TabV2] = []
}

struct ContactV1: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
}

struct ContactV2: Codable, Identifiable, Sendable, Equatable, FillsNewFields {
    var id: String
    var name: String
    var phone: String
    static let fillForNewFields = ContactV2(id: "", name: "", phone: "unknown")
}

/// Version 2 of the contact without a fill: a record of version 1 has nothing to fill `phone` from.
struct ContactV2NoFill: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var phone: String
}

final class ContactsV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Contacts" }
    @Records var contacts: RecordCollection<ContactV1>
}

final class ContactsV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Contacts" }
    @Records var contacts: RecordCollection<ContactV2>
}

final class ContactsV2NoFill: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Contacts" }
    @Records var contacts: RecordCollection<ContactV2NoFill>
}

struct WidthV1: Codable, Sendable, Equatable { var width = 0 }
struct WidthV2: Codable, Sendable, Equatable {
    var width = 0
    var color = "none"
}

/// Version 1 under the key that version 2 has since renamed.
final class RenamedKeyV1: EvolvingConfig, @unchecked Sendable {
    @Setting(key: "evolving.renamed.before") var window = WidthV1()
}

final class RenamedKeyV2: EvolvingConfig, @unchecked Sendable {
    @Setting(key: "evolving.renamed.after", previousKeys: ["evolving.renamed.before"]) var window = WidthV2()
}

final class BatchedV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Batched" }
    @Setting var window = WidthV1()
}

final class BatchedV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Batched" }
    @Setting var window = WidthV2()
}

/// Reads `allKeys` to choose which field to read: the fields it never reads stay unknown.
struct LookingAtAllKeys: Codable, Sendable, Equatable {
    var width = 0
    enum CodingKeys: String, CodingKey { case width, legacyWidth }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let key = container.allKeys.contains(.legacyWidth) ? CodingKeys.legacyWidth : .width
        width = try container.decode(Int.self, forKey: key)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(width, forKey: .width)
    }
}

final class AllKeysV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "AllKeys" }
    @Setting var window = LookingAtAllKeys()
}

final class AllKeysV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "AllKeys" }
    @Setting var window = WidthV2()
}

final class RolledBackV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "RolledBack" }
    @Setting var window = WidthV1()
}

final class RolledBackV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "RolledBack" }
    @Setting var window = WidthV2()
}

final class StormV1: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Storm" }
    @Setting var window = WidthV1()
}

final class StormV2: EvolvingConfig, @unchecked Sendable {
    override class var configName: String { "Storm" }
    @Setting var window = WidthV2()
}

@Suite struct UnknownFieldsTests {
    @Test func twoVersionsAssigningOnManyThreadsAtOnceNeitherHangNorLoseTheFieldsAtTheEnd() async {
        let store = InMemoryStore()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<100 {
                        // Configs made, assigned and released on every task, both versions at once.
                        if task.isMultiple(of: 2) {
                            StormV1(store: store).window.width = round
                        } else {
                            let newer = StormV2(store: store)
                            newer.batch { newer.window = WidthV2(width: round, color: "c\(task)") }
                        }
                    }
                }
            }
        }
        StormV2(store: store).window = WidthV2(width: 1, color: "last")
        StormV1(store: store).window.width = 2
        #expect(StormV2(store: store).window == WidthV2(width: 2, color: "last"))
    }

    @Test func anOlderVersionWritingUnderAKeyThatANewerVersionRenamedKeepsWhatItDoesNotKnow() {
        let store = InMemoryStore()
        let newer = RenamedKeyV2(store: store)
        newer.window = WidthV2(width: 1, color: "red")
        let older = RenamedKeyV1(store: store)
        #expect(older.window.width == 1)
        older.window.width = 5
        #expect(RenamedKeyV2(store: store).window == WidthV2(width: 5, color: "red"))
        withExtendedLifetime(newer) {}
    }

    @Test func aResetThenAnAssignmentInOneBatchKeepNothingOfTheResetValue() {
        let store = InMemoryStore()
        BatchedV2(store: store).window = WidthV2(width: 1, color: "red")
        let older = BatchedV1(store: store)
        older.batch {
            older.$window.reset()
            older.window.width = 9
        }
        #expect(store.value(forKey: "evolving.Batched.window") == .dictionary(["width": .int(9)]))
    }

    @Test func aTypeThatLooksAtAllKeysKnowsOnlyTheFieldsItReads() {
        let store = InMemoryStore()
        AllKeysV2(store: store).window = WidthV2(width: 1, color: "red")
        AllKeysV1(store: store).window.width = 4
        #expect(AllKeysV2(store: store).window == WidthV2(width: 4, color: "red"))
    }

    @Test func aRollBackByAnOlderVersionRestoresTheFieldsItDoesNotKnow() async throws {
        let store = RevisionedMemoryStore()
        let newer = RolledBackV2(store: store)
        newer.window = WidthV2(width: 1, color: "red")
        let older = RolledBackV1(store: store)
        let revision = try #require(try await older.$window.history(limit: 1).first).revision
        older.window.width = 2
        newer.window.color = "blue"
        try await older.$window.rollBack(to: revision)
        #expect(RolledBackV2(store: store).window == WidthV2(width: 1, color: "red"))
        withExtendedLifetime(newer) {}
    }

    @Test(arguments: StoreKind.allCases)
    func anOlderVersionThatAssignsKeepsTheFieldsItDoesNotKnowAtEveryDepth(_ kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        let newer = ProfileV2(
            name: "Ann", nickname: "A", avatar: "cat.png", privacy: .init(isPublic: false, showsEmail: true))
        do { KeptV2(store: fixture.open()).profile = newer }
        do {
            let older = KeptV1(store: fixture.open())
            #expect(older.profile == ProfileV1WithPrivacy(name: "Ann", nickname: "A", privacy: .init(isPublic: false)))
            older.profile.name = "Anne"
        }
        // Version 2 again: the name version 1 wrote, and the fields version 1 did not know, nested ones too.
        var expected = newer
        expected.name = "Anne"
        #expect(KeptV2(store: fixture.open()).profile == expected)
    }

    @Test func anOptionalSetToNilByTheOlderVersionIsNotBroughtBack() throws {
        let store = InMemoryStore()
        OptionalV2(store: store).profile = ProfileV2(name: "Bo", nickname: "B", avatar: "dog.png")
        let older = OptionalV1(store: store)
        #expect(older.profile.nickname == "B")
        // `nickname` is a field version 1 knows: left out when nil, and not carried over from the stored value.
        older.profile.nickname = nil
        guard case .dictionary(let written) = store.value(forKey: "evolving.Optional.profile") else {
            Issue.record("the profile written is not a dictionary")
            return
        }
        #expect(written["nickname"] == nil)
        #expect(written["avatar"] == .string("dog.png"))
        #expect(OptionalV1(store: store).profile == ProfileV1(name: "Bo", nickname: nil))
        #expect(OptionalV2(store: store).profile.avatar == "dog.png")
    }

    @Test func resetRemovesTheUnknownFieldsWithTheValue() throws {
        let store = InMemoryStore()
        ResetV2(store: store).profile = ProfileV2(name: "Cy", avatar: "owl.png")
        let older = ResetV1(store: store)
        older.profile.name = "Cyd"
        older.$profile.reset()
        #expect(store.value(forKey: "evolving.Reset.profile") == nil)
        #expect(ResetV2(store: store).profile == ProfileV2())
    }

    @Test func nothingIsCarriedInsideArrays() throws {
        let store = InMemoryStore()
        ListV2(store: store).profiles = [ProfileV2(name: "Di", avatar: "fox.png")]
        let older = ListV1(store: store)
        older.profiles.append(ProfileV1(name: "Ed"))
        // Elements are not matched between the old array and the new: version 1 writes the elements it has.
        guard case .array(let elements) = store.value(forKey: "evolving.List.profiles"),
            case .dictionary(let first) = elements.first
        else {
            Issue.record("the profiles written are not an array of dictionaries")
            return
        }
        #expect(elements.count == 2)
        #expect(first["avatar"] == nil)
    }

    @Test func aDictionaryEntryKeepsTheFieldsItsTypeDoesNotKnowAndARemovedEntryStaysRemoved() throws {
        let store = InMemoryStore()
        ByNameV2(store: store).profiles = [
            "ann": ProfileV2(name: "Ann", avatar: "cat.png"), "bo": ProfileV2(name: "Bo", avatar: "dog.png"),
        ]
        let older = ByNameV1(store: store)
        older.profiles["ann"]?.name = "Anne"
        older.profiles["bo"] = nil
        #expect(ByNameV2(store: store).profiles == ["ann": ProfileV2(name: "Anne", avatar: "cat.png")])
    }

    @Test func anElementOfAnArrayOrADictionaryFillsItsNewFieldsFromItsTypesFill() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        do {
            let older = TabsV1(store: store)
            older.tabs = [TabV1(title: "Mail"), TabV1(title: "News")]
            older.named = ["home": TabV1(title: "Home")]
        }
        let newer = TabsV2(store: store)
        #expect(newer.tabs == [TabV2(title: "Mail", isPinned: true), TabV2(title: "News", isPinned: true)])
        #expect(newer.named == ["home": TabV2(title: "Home", isPinned: true)])
        #expect(ReportedErrors.mentioning("evolving.Tabs").isEmpty)
    }

    @Test func aFieldOfAnotherTypeInAnElementFallsBackAloneAndIsReportedByItsPlace() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        store.setValue(
            .array([
                .dictionary(["title": .string("Mail"), "isPinned": .bool(false)]),
                .dictionary(["title": .int(42), "isPinned": .bool(false)]),
            ]), forKey: "evolving.BadTabs.tabs")
        let config = BadTabs(store: store)
        #expect(config.tabs == [TabV2(title: "Mail", isPinned: false), TabV2(title: "untitled", isPinned: false)])
        let reports = ReportedErrors.mentioning("evolving.BadTabs.tabs[1].title")
        #expect(reports.count == 1)
    }

    @Test func aRecordOfAnOlderVersionFillsItsNewFieldsAndAnUpsertByTheOlderVersionKeepsTheNewerFields() throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        ContactsV1(store: store).contacts.upsert(ContactV1(id: "1", name: "Fay"))
        let newer = ContactsV2(store: store)
        #expect(newer.contacts.all == [ContactV2(id: "1", name: "Fay", phone: "unknown")])
        // Without a fill, the record is skipped, reported and kept as it was stored.
        #expect(ContactsV2NoFill(store: store).contacts.all.isEmpty)
        #expect(!ReportedErrors.mentioning("evolving.Contacts.contacts[1]").isEmpty)

        newer.contacts.upsert(ContactV2(id: "1", name: "Fay", phone: "555-0100"))
        newer.contacts.upsert(ContactV2(id: "2", name: "Gus", phone: "555-0101"))
        // An older program renames a contact: the phone it does not know stays with the record.
        ContactsV1(store: store).contacts.upsert(ContactV1(id: "1", name: "Faye"))
        #expect(
            ContactsV2(store: store).contacts.all == [
                ContactV2(id: "1", name: "Faye", phone: "555-0100"), ContactV2(id: "2", name: "Gus", phone: "555-0101"),
            ])
    }

    @Test func anImportByAnOlderVersionKeepsTheStoredFieldsItDoesNotKnow() throws {
        let store = InMemoryStore()
        KeptV2(store: store).profile = ProfileV2(name: "Hal", avatar: "bee.png")
        let older = KeptV1(store: store)
        let document = ConfigDocument(configs: [
            "Kept": .init(
                namespace: "evolving", schemaVersion: 0, settings: ["profile": .dictionary(["name": .string("Hank")])])
        ])
        try document.apply(to: [older])
        let newer = KeptV2(store: store).profile
        #expect(newer.name == "Hank")
        #expect(newer.avatar == "bee.png")
    }
}
