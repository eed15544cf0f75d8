import Foundation

/// A settings file's members as the file prints them, one line each, sorted by key, kept from one write to
/// the next so that a write prints only the members it changes.
///
/// Printing all the members was most of a durable write's own work: about 0.3 million instructions for a
/// file of a hundred settings, against a few thousand to copy their lines. The lines are made again from
/// the values whenever the values are replaced wholesale (the file was read anew), and whenever the number
/// of keys disagrees with the values, so that a line that might be stale is never written.
///
/// A key that the file spells in several ways (canonically equivalent, other bytes: see ``ExactKey``) has one
/// line per spelling, side by side: the one the values hold first, then the others (``Respelling``s) in the
/// order of their bytes.
struct FileText {
    /// A member whose key is another spelling of a key in the values, with the text it was read as, if its
    /// value is one that ``StoredValue`` cannot hold exactly.
    struct Respelling: Equatable {
        var value: StoredValue
        var raw: String?
    }

    /// The keys, sorted, and each member's line, at the same positions.
    private var keys: [String] = []
    private var lines: [[UInt8]] = []
    /// Whether `keys` and `lines` are the values' lines.
    private var isCurrent = false

    /// The values were replaced: the next ``data(members:rawMembers:)`` prints every member.
    mutating func invalidate() {
        isCurrent = false
        keys = []
        lines = []
    }

    /// The member `key` is now `value` (`nil`: removed), which the file prints from the value.
    mutating func update(key: String, to value: StoredValue?) {
        guard isCurrent else { return }
        let position = insertionPosition(of: key)
        let isPresent = position < keys.count && keys[position] == key
        switch (value, isPresent) {
        case (let value?, true):
            // The key as the values hold it: a dictionary keeps the first spelling of equal keys ("é" written
            // precomposed or as "e" and a combining accent).
            lines[position] = JSONText.memberLine(key: keys[position], value: value, raw: nil)
        case (let value?, false):
            keys.insert(key, at: position)
            lines.insert(JSONText.memberLine(key: key, value: value, raw: nil), at: position)
        case (nil, true):
            keys.remove(at: position)
            lines.remove(at: position)
        case (nil, false):
            break
        }
    }

    /// The member of the other spelling `key` (see ``Respelling``) is now `value` (`nil`: removed).
    mutating func updateRespelling(key: String, to value: StoredValue?) {
        guard isCurrent else { return }
        var position = insertionPosition(of: key)
        while position < keys.count, keys[position] == key, !keys[position].utf8.elementsEqual(key.utf8) {
            position += 1
        }
        guard position < keys.count, keys[position] == key else { return }
        if let value {
            lines[position] = JSONText.memberLine(key: key, value: value, raw: nil)
        } else {
            keys.remove(at: position)
            lines.remove(at: position)
        }
    }

    /// The file's text for `members`, the raw text of `rawMembers` in place of their values, and the other
    /// spellings of their keys.
    mutating func data(
        members: [String: StoredValue], rawMembers: [String: String], respellings: [ExactKey: Respelling]
    ) -> Data {
        if !isCurrent || keys.count != members.count + respellings.count {
            (keys, lines) = Self.printed(members, rawMembers, respellings)
            isCurrent = true
        }
        // Debug builds (the tests) check every write's kept lines against the values printed whole.
        assert(
            lines == Self.printed(members, rawMembers, respellings).lines,
            "a settings file's kept lines differ from its values")
        return JSONText.fileData(lines: lines)
    }

    /// Every member's line, sorted by key, each key's other spellings after it.
    private static func printed(
        _ members: [String: StoredValue], _ rawMembers: [String: String], _ respellings: [ExactKey: Respelling]
    ) -> (keys: [String], lines: [[UInt8]]) {
        let sorted = members.keys.sorted()
        guard !respellings.isEmpty else {
            return (
                sorted, sorted.map { key in JSONText.memberLine(key: key, value: members[key]!, raw: rawMembers[key]) }
            )
        }
        // Grouped by `String` equality: each key with its other spellings.
        let others = Dictionary(grouping: respellings.keys.map(\.string), by: { $0 })
        var keys: [String] = []
        var lines: [[UInt8]] = []
        for key in sorted {
            keys.append(key)
            lines.append(JSONText.memberLine(key: key, value: members[key]!, raw: rawMembers[key]))
            for other in (others[key] ?? []).sorted(by: ExactKey.bytesPrecede) {
                let respelling = respellings[ExactKey(other)]!
                keys.append(other)
                lines.append(JSONText.memberLine(key: other, value: respelling.value, raw: respelling.raw))
            }
        }
        return (keys, lines)
    }

    /// The first position whose key is not below `key`.
    private func insertionPosition(of key: String) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
