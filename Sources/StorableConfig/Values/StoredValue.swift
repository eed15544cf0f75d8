import Foundation

/// The stored form of a setting: the property-list-like values every ``ConfigStore`` can hold.
///
/// A setting's Swift value is converted to a `StoredValue` before it reaches a store, and back when it is
/// loaded. Stores never see Swift types, so a store only has to hold these few cases, and a store written by
/// you (a mock, a remote store) needs no knowledge of the settings that use it.
///
/// ```swift
/// let store = InMemoryStore()
/// try store.setValue(.string("nkysu1"), forKey: "com.example.app.TwitterConfig.userName")
/// try store.value(forKey: "com.example.app.TwitterConfig.userName")  // .string("nkysu1")
/// ```
///
/// Integers that fit in `Int64` are always ``int(_:)``; ``uint(_:)`` holds only values above `Int64.max`.
/// A number read from JSON text that none of ``int(_:)``, ``uint(_:)`` and ``double(_:)`` holds exactly is
/// ``number(_:)``, its text, so that no digit of it is lost.
///
/// A value nests at most ``maximumDepth`` arrays and dictionaries.
public enum StoredValue: Sendable, Hashable {
    /// An explicit "no value": what an optional setting whose default is not `nil` stores for `nil`.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer in the range of `Int64`.
    case int(Int64)
    /// An unsigned integer above `Int64.max`.
    case uint(UInt64)
    /// A floating-point number (also the stored form of `Float`).
    case double(Double)
    /// A number as JSON text, for a number read from JSON text that no other case holds exactly: an integer
    /// beyond 64 bits (`18446744073709551616`), more significant digits than a `Double` keeps, a value beyond a
    /// `Double`'s range (`1e400`, `1e-400`).
    ///
    /// A setting reads it only where its type holds the number exactly (a `Decimal` of up to 38 digits, an
    /// integer in range) or, for `Double` and `Float`, where it is in range (rounded to the nearest, as any
    /// number in JSON text is); otherwise the setting reads its default and the value is reported and kept.
    /// JSON text is written with the text as it is; text that is not a JSON number is written as a string.
    case number(String)
    /// A string (also the stored form of `URL`).
    case string(String)
    /// Raw bytes.
    case data(Data)
    /// A point in time.
    case date(Date)
    /// An ordered list of values.
    case array([StoredValue])
    /// A dictionary with string keys.
    case dictionary([String: StoredValue])

    /// The most arrays and dictionaries a stored value may nest, 128: a setting's value that nests more is not
    /// written (the assignment is reported as ``StorableConfigError/encodingFailed(key:reason:)``), and the JSON
    /// reader reads every value nested this deep inside a settings file or a ``ConfigDocument``.
    ///
    /// Chosen so that encoding, writing, reading and decoding such a value fit, with room to spare, in the
    /// 512 KiB stack of a secondary thread or a task on Apple platforms, in a debug build.
    public static let maximumDepth = 128

    /// Whether the value nests more than `limit` arrays and dictionaries; looks no deeper than `limit + 1`.
    func nests(deeperThan limit: Int) -> Bool {
        switch self {
        case .array(let items): limit <= 0 || items.contains { $0.nests(deeperThan: limit - 1) }
        case .dictionary(let members): limit <= 0 || members.values.contains { $0.nests(deeperThan: limit - 1) }
        default: false
        }
    }

    /// Creates the stored form of an integer: ``int(_:)`` when it fits in `Int64`, else ``uint(_:)``.
    static func integer(_ value: some BinaryInteger) -> StoredValue {
        if let signed = Int64(exactly: value) { return .int(signed) }
        return .uint(UInt64(value))
    }

    /// The name of this value's kind, for messages: "a string", "a Boolean", "an integer", "null".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .int, .uint: "an integer"
        case .double: "a floating-point number"
        case .number: "a number"
        case .string: "a string"
        case .data: "data"
        case .date: "a date"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }
}

extension StoredValue: CustomStringConvertible {
    /// The value as compact JSON text, shortened to 200 characters, for messages and logs.
    public var description: String {
        let text = JSONText.string(from: self, pretty: false)
        guard text.count > 200 else { return text }
        return String(text.prefix(197)) + "..."
    }
}

extension StoredValue {
    /// Parses JSON text: integers become ``int(_:)`` (or ``uint(_:)`` above `Int64.max`), other numbers
    /// ``double(_:)``, numbers that none of these holds exactly ``number(_:)``, objects ``dictionary(_:)``.
    /// - Throws: An error naming the byte offset where the text stops being JSON, or where it nests more than
    ///   ``maximumDepth`` arrays and objects (and a few more, for a document that holds stored values).
    public init(jsonText: String) throws {
        self = try JSONText.parse(Data(jsonText.utf8))
    }

    /// The value as JSON text, keys sorted; `pretty` indents by two spaces. Dates are ISO 8601 text, data is
    /// base64 text, non-finite numbers are the strings "Infinity", "-Infinity" and "NaN".
    public func jsonText(pretty: Bool = false) -> String {
        JSONText.string(from: self, pretty: pretty)
    }
}
