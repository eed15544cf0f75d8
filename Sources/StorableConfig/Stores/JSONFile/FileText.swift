import Foundation

/// A settings file's members as the file prints them, one line each, sorted by key, kept from one write to
/// the next so that a write prints only the members it changes.
///
/// Printing all the members was most of a durable write's own work: about 0.3 million instructions for a
/// file of a hundred settings, against a few thousand to copy their lines. The lines are made again from
/// the values whenever the values are replaced wholesale (the file was read anew), and whenever the number
/// of keys disagrees with the values, so that a line that might be stale is never written.
struct FileText {
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

    /// The file's text for `members`, the raw text of `rawMembers` in place of their values.
    mutating func data(members: [String: StoredValue], rawMembers: [String: String]) -> Data {
        if !isCurrent || keys.count != members.count {
            (keys, lines) = Self.printed(members, rawMembers)
            isCurrent = true
        }
        // Debug builds (the tests) check every write's kept lines against the values printed whole.
        assert(lines == Self.printed(members, rawMembers).lines, "a settings file's kept lines differ from its values")
        return JSONText.fileData(lines: lines)
    }

    /// Every member's line, sorted by key.
    private static func printed(_ members: [String: StoredValue], _ rawMembers: [String: String]) -> (
        keys: [String], lines: [[UInt8]]
    ) {
        let keys = members.keys.sorted()
        return (keys, keys.map { key in JSONText.memberLine(key: key, value: members[key]!, raw: rawMembers[key]) })
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
