import Foundation

import StorableConfig

/// What the fuzz checks of StorableConfig's own parsers share (compiled into each of their fuzz targets).
enum FuzzSupport {
    /// Where two values differ, as a path and both values; `nil` if they are identical: strings and keys byte
    /// for byte, doubles bit for bit.
    static func difference(_ left: StoredValue, _ right: StoredValue, at path: String = "$") -> String? {
        switch (left, right) {
        case (.string(let a), .string(let b)):
            return a.utf8.elementsEqual(b.utf8) ? nil : "\(path): \(a.debugDescription) ≠ \(b.debugDescription)"
        case (.double(let a), .double(let b)):
            return a.bitPattern == b.bitPattern ? nil : "\(path): \(a) ≠ \(b)"
        case (.array(let a), .array(let b)):
            guard a.count == b.count else { return "\(path): \(a.count) items ≠ \(b.count) items" }
            for index in a.indices {
                if let found = difference(a[index], b[index], at: "\(path)[\(index)]") { return found }
            }
            return nil
        case (.dictionary(let a), .dictionary(let b)):
            guard a.count == b.count else { return "\(path): \(a.count) members ≠ \(b.count) members" }
            for (key, value) in a {
                guard let index = b.index(forKey: key), b[index].key.utf8.elementsEqual(key.utf8) else {
                    return "\(path): no member \(key.debugDescription) on the right"
                }
                if let found = difference(value, b[index].value, at: "\(path)[\(key.debugDescription)]") {
                    return found
                }
            }
            return nil
        default:
            return left == right ? nil : "\(path): \(left) ≠ \(right)"
        }
    }
}

extension StoredValue {
    /// Whether the value holds ±infinity or NaN anywhere: what a number beyond Double's range reads as.
    var hasNonFiniteNumber: Bool {
        switch self {
        case .double(let number): !number.isFinite
        case .array(let items): items.contains { $0.hasNonFiniteNumber }
        case .dictionary(let members): members.values.contains { $0.hasNonFiniteNumber }
        default: false
        }
    }

    /// Whether the value holds a number that ``StoredValue`` keeps as its text (``StoredValue/number(_:)``): beyond a
    /// `Double`'s range, or with more digits than it keeps.
    var hasNumberKeptAsText: Bool {
        switch self {
        case .number: true
        case .array(let items): items.contains { $0.hasNumberKeptAsText }
        case .dictionary(let members): members.values.contains { $0.hasNumberKeptAsText }
        default: false
        }
    }
}
