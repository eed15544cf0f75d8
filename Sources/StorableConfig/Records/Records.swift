import Foundation

/// A collection of `Codable & Identifiable` records stored under one setting's key, declared in one line.
///
/// ```swift
/// struct Income: Codable, Identifiable, Sendable {
///     var id: String
///     var name: String
///     var amount: Int
///     var order: Int
/// }
/// final class BudgetConfig: StorableConfig {
///     @Setting var currency = "JPY"
///     @Records(orderedBy: \.order) var incomes: RecordCollection<Income>
/// }
/// let budget = BudgetConfig()
/// budget.incomes.upsert(Income(id: budget.incomes.newID(), name: "Salary", amount: 300_000, order: 0))
/// budget.incomes.all   // sorted by `order`, then by id
/// ```
///
/// The records are stored under the key `"<namespace>.<configName>.<propertyName>"` as one dictionary from id
/// to record, which reads naturally in a JSON file. See ``RecordCollection`` for the operations.
@propertyWrapper
public final class Records<Record: Codable & Identifiable & Sendable>: @unchecked Sendable
where Record.ID: LosslessStringConvertible & Sendable {
    /// The collection.
    public let wrappedValue: RecordCollection<Record>

    /// Records kept in the order of their ids, stored under `key` when one is given, and found, and moved to
    /// their key, under earlier property names or keys, as for
    /// ``Setting/init(wrappedValue:key:previousNames:previousKeys:validate:secret:description:)``; `description`
    /// says what the records are for (see ``RecordCollection/settingDescription``).
    public init(
        key: String? = nil, previousNames: [String] = [], previousKeys: [String] = [], description: String? = nil
    ) {
        wrappedValue = RecordCollection(
            orderKeyPath: nil,
            declaredKeys: DeclaredKeys(key: key, previousNames: previousNames, previousKeys: previousKeys),
            description: description)
    }

    /// Records kept in the order of `orderedBy`, then of their ids; deletions, insertions and moves keep that
    /// field numbered 0, 1, 2, … without gaps or duplicates. Stored under `key` when one is given, and found
    /// under earlier property names or keys; `description` says what the records are for.
    public init(
        orderedBy order: WritableKeyPath<Record, Int> & Sendable, key: String? = nil, previousNames: [String] = [],
        previousKeys: [String] = [], description: String? = nil
    ) {
        wrappedValue = RecordCollection(
            orderKeyPath: order,
            declaredKeys: DeclaredKeys(key: key, previousNames: previousNames, previousKeys: previousKeys),
            description: description)
    }

    /// The collection, through `$name`, as for ``Setting``: its ``RecordCollection/key`` and ``RecordCollection/reset()``.
    public var projectedValue: RecordCollection<Record> { wrappedValue }
}

extension Records: WrapsSettingBox {
    var settingBox: any SettingBox { wrappedValue }
}

/// A property wrapper whose storage holds a setting box of its own.
protocol WrapsSettingBox {
    var settingBox: any SettingBox { get }
}
