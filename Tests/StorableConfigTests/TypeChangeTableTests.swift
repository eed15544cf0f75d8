import Foundation
import StorableConfig
import Testing

// The table "Which changes need a migration" of Docs/SupportedTypes.md, row by row, in each store's format: version
// 1 of a type writes, version 2 reads and writes, version 1 reads and writes again, version 2 reads again. Each
// config is created on a freshly opened store, as a relaunched program would be.

class TableConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "table" }
}

// Field added.
struct AddedFieldV1: Codable, Sendable, Equatable { var a = 0 }
struct AddedFieldV2: Codable, Sendable, Equatable {
    var a = 0
    var b = "new"
}
final class AddedFieldConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "AddedField" }
    @Setting var value = AddedFieldV1()
}
final class AddedFieldConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "AddedField" }
    @Setting var value = AddedFieldV2()
}

// Field removed.
struct RemovedFieldV1: Codable, Sendable, Equatable {
    var a = 0
    var gone = ""
}
struct RemovedFieldV2: Codable, Sendable, Equatable { var a = 0 }
final class RemovedFieldConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "RemovedField" }
    @Setting var value = RemovedFieldV1()
}
final class RemovedFieldConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "RemovedField" }
    @Setting var value = RemovedFieldV2()
}

// The stored name of a field changed with `CodingKeys`.
struct RenamedFieldV1: Codable, Sendable, Equatable { var title = "" }
struct RenamedFieldV2: Codable, Sendable, Equatable {
    var title = ""
    enum CodingKeys: String, CodingKey { case title = "name" }
}
final class RenamedFieldConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "RenamedField" }
    @Setting var value = RenamedFieldV1()
}
final class RenamedFieldConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "RenamedField" }
    @Setting var value = RenamedFieldV2()
}

// Type widened.
struct WidenedFieldV1: Codable, Sendable, Equatable {
    var count = 0
    var label: String = ""
}
struct WidenedFieldV2: Codable, Sendable, Equatable {
    var count = 0.0
    var label: String? = nil
}
final class WidenedFieldConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "WidenedField" }
    @Setting var value = WidenedFieldV1()
}
final class WidenedFieldConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "WidenedField" }
    @Setting var value = WidenedFieldV2()
}

// Optional made required.
struct RequiredFieldV1: Codable, Sendable, Equatable { var nickname: String? = nil }
struct RequiredFieldV2: Codable, Sendable, Equatable { var nickname = "none" }
final class RequiredFieldConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "RequiredField" }
    @Setting var value = RequiredFieldV1()
}
final class RequiredFieldConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "RequiredField" }
    @Setting var value = RequiredFieldV2()
}

// Enum case added.
enum ModeV1: String, Codable, Sendable { case light, dark }
enum ModeV2: String, Codable, Sendable { case light, dark, sepia }
struct AddedCaseV1: Codable, Sendable, Equatable {
    var mode = ModeV1.light
    var size = 0
}
struct AddedCaseV2: Codable, Sendable, Equatable {
    var mode = ModeV2.light
    var size = 0
}
final class AddedCaseConfigV1: TableConfig, @unchecked Sendable {
    override class var configName: String { "AddedCase" }
    @Setting var value = AddedCaseV1()
}
final class AddedCaseConfigV2: TableConfig, @unchecked Sendable {
    override class var configName: String { "AddedCase" }
    @Setting var value = AddedCaseV2()
}

@Suite struct TypeChangeTableTests {
    @Test(arguments: StoreKind.allCases)
    func aFieldAdded(_ kind: StoreKind) {
        let fixture = StoreFixture(kind)
        AddedFieldConfigV1(store: fixture.open()).value = AddedFieldV1(a: 1)
        let newer = AddedFieldConfigV2(store: fixture.open())
        #expect(newer.value == AddedFieldV2(a: 1, b: "new"))
        newer.value.b = "set by 2"
        let older = AddedFieldConfigV1(store: fixture.open())
        #expect(older.value == AddedFieldV1(a: 1))
        older.value.a = 3
        #expect(AddedFieldConfigV2(store: fixture.open()).value == AddedFieldV2(a: 3, b: "set by 2"))
    }

    @Test(arguments: StoreKind.allCases)
    func aFieldRemoved(_ kind: StoreKind) {
        let fixture = StoreFixture(kind)
        RemovedFieldConfigV1(store: fixture.open()).value = RemovedFieldV1(a: 1, gone: "kept")
        let newer = RemovedFieldConfigV2(store: fixture.open())
        #expect(newer.value == RemovedFieldV2(a: 1))
        newer.value.a = 2
        // The field version 2 removed is still there for version 1.
        #expect(RemovedFieldConfigV1(store: fixture.open()).value == RemovedFieldV1(a: 2, gone: "kept"))
    }

    @Test(arguments: StoreKind.allCases)
    func aFieldWhoseStoredNameChangedNeedsAMigration(_ kind: StoreKind) {
        let fixture = StoreFixture(kind)
        RenamedFieldConfigV1(store: fixture.open()).value = RenamedFieldV1(title: "Mine")
        let newer = RenamedFieldConfigV2(store: fixture.open())
        // Without a migration the new name reads the default...
        #expect(newer.value == RenamedFieldV2(title: ""))
        newer.value.title = "Theirs"
        // ...and the old name is kept as a field version 2 does not know: version 1 still reads its value.
        #expect(RenamedFieldConfigV1(store: fixture.open()).value == RenamedFieldV1(title: "Mine"))
        #expect(RenamedFieldConfigV2(store: fixture.open()).value == RenamedFieldV2(title: "Theirs"))
    }

    @Test(arguments: StoreKind.allCases)
    func aTypeWidened(_ kind: StoreKind) {
        let fixture = StoreFixture(kind)
        WidenedFieldConfigV1(store: fixture.open()).value = WidenedFieldV1(count: 3, label: "x")
        let newer = WidenedFieldConfigV2(store: fixture.open())
        #expect(newer.value == WidenedFieldV2(count: 3, label: "x"))
        newer.value.count = 4
        #expect(WidenedFieldConfigV1(store: fixture.open()).value == WidenedFieldV1(count: 4, label: "x"))
    }

    @Test(arguments: StoreKind.allCases)
    func anOptionalMadeRequired(_ kind: StoreKind) {
        let fixture = StoreFixture(kind)
        RequiredFieldConfigV1(store: fixture.open()).value = RequiredFieldV1(nickname: nil)
        let newer = RequiredFieldConfigV2(store: fixture.open())
        #expect(newer.value == RequiredFieldV2(nickname: "none"))
        newer.value.nickname = "Jo"
        #expect(RequiredFieldConfigV1(store: fixture.open()).value == RequiredFieldV1(nickname: "Jo"))
    }

    @Test(arguments: StoreKind.allCases)
    func anEnumCaseAdded(_ kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        AddedCaseConfigV2(store: fixture.open()).value = AddedCaseV2(mode: .sepia, size: 5)
        let stored = try fixture.open().value(forKey: "table.AddedCase.value")
        // Version 1 reads the default for the case it does not know, the other field as stored, and leaves the
        // stored value alone until it assigns the setting.
        let older = AddedCaseConfigV1(store: fixture.open())
        #expect(older.value == AddedCaseV1(mode: .light, size: 5))
        #expect(try fixture.open().value(forKey: "table.AddedCase.value") == stored)
        #expect(AddedCaseConfigV2(store: fixture.open()).value == AddedCaseV2(mode: .sepia, size: 5))
        // Assigning writes the field it knows, with the value it reads.
        older.value.size = 6
        #expect(AddedCaseConfigV2(store: fixture.open()).value == AddedCaseV2(mode: .light, size: 6))
    }
}
