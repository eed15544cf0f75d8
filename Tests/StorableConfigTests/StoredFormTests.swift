import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

// What a module that reads or writes the store itself for a setting uses (history and rollback, in
// StorableConfigEtcd): the key the store holds the value under, the store, a stored value read and checked as the
// setting would, and telling the configs of a write made around them.

private struct Window: Codable, Sendable, Equatable {
    var width = 0
    var height = 0
}

private enum Mode: String, Codable, Sendable {
    case light, dark
}

private final class StoredForm: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stored-form" }
    @Setting(in: 1...100) var percent = 50
    @Setting(secret: true) var secretMode = Mode.light
    @Setting var window = Window()
    @Setting var tags: [String] = []
    @Setting(secret: true) var token = ""
}

private final class StoredFormOverridden: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stored-form" }
    override class var overrides: ConfigOverrides {
        .arguments(["program", ConfigOverrides.argumentName(configName: "StoredFormOverridden", name: "port"), "8080"])
    }
    @Setting var port = 80
}

private final class StoredFormOld: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stored-form" }
    @Setting var level = 1
}

private final class StoredFormNew: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stored-form" }
    override class var previousConfigNames: [String] { ["StoredFormOld"] }
    @Setting var level = 1
}

private final class StoredFormRecords: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stored-form" }
    @Records var items: RecordCollection<CountedRecord>
}

@Suite struct StoredFormTests {
    @Test func aStoredValueReadsAsTheSettingReadsIt() {
        let config = StoredForm(store: InMemoryStore())
        #expect(config.$percent.value(of: .int(7)) == 7)
        #expect(config.$percent.value(of: .string("seven")) == nil)
        // A field that another version of the type lacks is filled from the default; one of the wrong type is not.
        #expect(config.$window.value(of: .dictionary(["width": .int(3)])) == Window(width: 3, height: 0))
        #expect(config.$window.value(of: .dictionary(["width": .string("wide")])) == nil)
        // The range is not applied: reading is not assigning.
        #expect(config.$percent.value(of: .int(500)) == 500)
        #expect(config.$tags.valueText(of: .array([.string("a"), .string("b")])) == #"["a","b"]"#)
        #expect(config.$tags.valueText(of: .int(1)) == nil)
        #expect(config.$token.valueText(of: .string("s3cr3t")) == "s3cr3t")
    }

    @Test func aStoredValueToAssignIsCheckedAsAnAssignmentAndNothingIsWritten() throws {
        let store = InMemoryStore()
        let config = StoredForm(store: store)
        #expect(try config.$percent.storedValueToAssign(.int(7)) == .int(7))
        #expect {
            try config.$percent.storedValueToAssign(.int(500))
        } throws: { error in
            guard case .invalidValue(let key, let value, _) = error as? StorableConfigError else { return false }
            return key == "stored-form.StoredForm.percent" && value == "500"
        }
        #expect {
            try config.$percent.storedValueToAssign(.string("lots"))
        } throws: { error in
            guard case .typeMismatch(let key, "Int", .string("lots"), _, _) = error as? StorableConfigError else {
                return false
            }
            return key == "stored-form.StoredForm.percent"
        }
        // A secret's value is never quoted.
        #expect {
            try config.$token.storedValueToAssign(.int(12345))
        } throws: { error in
            guard case .typeMismatch(_, _, let found, _, _) = error as? StorableConfigError else { return false }
            return found == .string(StorableConfigError.redacted) && !"\(error)".contains("12345")
        }
        // Nor quoted by the decoder's message, which names the raw value it refused.
        #expect {
            try config.$secretMode.storedValueToAssign(.string("hunter2"))
        } throws: { error in
            guard case .typeMismatch(let key, _, _, _, _) = error as? StorableConfigError else { return false }
            return key == "stored-form.StoredForm.secretMode" && !"\(error)".contains("hunter2")
        }
        #expect {
            try StoredForm(store: InMemoryStore()).$window.storedValueToAssign(.string("hunter2"))
        } throws: { error in "\(error)".contains("hunter2") }
        // Members this version of the type does not know are kept; a missing field is filled.
        let newer: StoredValue = .dictionary(["width": .int(3), "depth": .int(9)])
        #expect(
            try config.$window.storedValueToAssign(newer)
                == .dictionary(["width": .int(3), "height": .int(0), "depth": .int(9)]))
        #expect(store.value(forKey: config.$percent.key) == nil)
        #expect(store.value(forKey: config.$window.key) == nil)
        #expect(config.percent == 50)
    }

    @Test func aStoredValueToAssignToAnOverriddenSettingIsReportedOnce() throws {
        ReportedErrors.install()
        let config = StoredFormOverridden(store: InMemoryStore())
        #expect(config.port == 8080)
        #expect(try config.$port.storedValueToAssign(.int(81)) == .int(81))
        #expect(try config.$port.storedValueToAssign(.int(82)) == .int(82))
        let reports = ReportedErrors.mentioning("stored-form.StoredFormOverridden.port").filter {
            if case .assignedWhileOverridden = $0 { true } else { false }
        }
        #expect(reports.count == 1)
    }

    @Test func theStoreKeyIsWhereTheStoreHoldsTheValueOfARenamedClass() throws {
        let store = InMemoryStore()
        let old = StoredFormOld(store: store)
        #expect(old.$level.storeKey == "stored-form.StoredFormOld.level")
        let oldStore = try #require(old.$level.store)
        #expect(ObjectIdentifier(oldStore) == ObjectIdentifier(store))
        let new = StoredFormNew(store: store)
        // The old class's config now reads and writes where its successor does.
        #expect(old.$level.key == "stored-form.StoredFormOld.level")
        #expect(old.$level.storeKey == "stored-form.StoredFormNew.level")
        #expect(new.$level.storeKey == "stored-form.StoredFormNew.level")
        old.level = 5
        #expect(store.value(forKey: old.$level.storeKey) == .int(5))
        #expect(Setting(wrappedValue: 0).storeKey.isEmpty)
        #expect(Setting(wrappedValue: 0).store == nil)
    }

    @Test func aStoreThatNamesNoStorageTellsTheConfigsOfAChangeMadeAroundThem() {
        let store = InMemoryStore()
        let config = StoredForm(store: store)
        let heard = Locked<[Int]>([])
        let token = config.$percent.observe { value in heard.withLock { $0.append(value) } }
        store.setValue(.int(9), forKey: config.$percent.key)
        #expect(config.percent == 50)
        store.storageDidChange(forKeys: [config.$percent.key])
        #expect(config.percent == 9)
        #expect(heard.withLock { $0 } == [9])
        withExtendedLifetime(token) {}
    }

    @Test func aRollBackThroughAStoreOfTheUsersOwnReachesEveryConfigBeforeItReturns() async throws {
        let store = RevisionedMemoryStore()
        let writer = StoredForm(store: store)
        let reader = StoredForm(store: store)
        let heard = Locked<[Int]>([])
        let token = reader.$percent.observe { value in heard.withLock { $0.append(value) } }
        writer.percent = 10
        writer.percent = 20
        let texts = try await (writer.$percent as any AnySetting).historyTexts(limit: 5)
        #expect(texts.map(\.value) == ["20", "10"])
        try await (writer.$percent as any AnySetting).rollBack(to: texts[1].revision, ifUnchangedSince: nil)
        #expect(writer.percent == 10)
        #expect(reader.percent == 10)
        #expect(heard.withLock { $0 } == [10, 20, 10])
        withExtendedLifetime(token) {}
    }

    @Test func aRollBackThatIsRefusedWritesNothing() async throws {
        let store = RevisionedMemoryStore()
        let config = StoredForm(store: store)
        let setting: any AnySetting = config.$percent
        config.percent = 10
        let first = try #require(try await setting.historyTexts(limit: 1).first).revision
        // Out of the range now: written around the config, as another program might have.
        try store.setValue(.int(500), forKey: config.$percent.key, ifModifiedAt: first)
        let outOfRange = try #require(try await setting.historyTexts(limit: 1).first)
        config.percent = 30
        let latest = try #require(try await setting.historyTexts(limit: 1).first).revision
        await #expect {
            try await setting.rollBack(to: outOfRange.revision, ifUnchangedSince: nil)
        } throws: { error in
            guard case .invalidValue(let key, "500", _) = error as? StorableConfigError else { return false }
            return key == "stored-form.StoredForm.percent"
        }
        await #expect {
            try await setting.rollBack(to: first, ifUnchangedSince: first)
        } throws: { error in
            guard case .changedSinceRevision(_, let seen, let current) = error as? StorableConfigError else {
                return false
            }
            return seen == first && current == latest
        }
        await #expect {
            try await setting.rollBack(to: first - 1, ifUnchangedSince: nil)
        } throws: { error in
            guard case .noValueAtRevision(let key, _) = error as? StorableConfigError else { return false }
            return key == "stored-form.StoredForm.percent"
        }
        #expect(try await setting.historyTexts(limit: 1).first?.revision == latest)
        #expect(config.percent == 30)
        try await setting.rollBack(to: first, ifUnchangedSince: latest)
        #expect(config.percent == 10)
    }

    @Test func aRecordCollectionHasNoHistory() async throws {
        let config = StoredFormRecords(store: RevisionedMemoryStore())
        let items: any AnySetting = config.$items
        #expect(items.storeKey == "stored-form.StoredFormRecords.items")
        #expect(items.valueText(of: .dictionary([:])) == nil)
        await #expect {
            _ = try await items.historyTexts(limit: 1)
        } throws: { error in
            guard case .readFailed(let key, _) = error as? StorableConfigError else { return false }
            return key == "stored-form.StoredFormRecords.items"
        }
        #expect(throws: StorableConfigError.self) { try items.storedValueToAssign(.dictionary([:])) }
    }
}
