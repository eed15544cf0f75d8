import Foundation

/// A settings file's text: its members, one line each, sorted by key, printed whole at every write (a few
/// hundred thousand instructions for a hundred settings, against the milliseconds of the write's `fsync`).
///
/// A key that the file spells in several ways (canonically equivalent, other bytes: see ``ExactKey``) has one
/// line per spelling, side by side: the one the values hold first, then the others (``Respelling``s) in the
/// order of their bytes.
enum FileText {
    /// A member whose key is another spelling of a key in the values, with the text it was read as, if its
    /// value is one that ``StoredValue`` cannot hold exactly.
    struct Respelling: Equatable {
        var value: StoredValue
        var raw: String?
    }

    /// The file's text for `members`, the raw text of `rawMembers` in place of their values, and the other
    /// spellings of their keys: every member's line, sorted by key, each key's other spellings after it.
    static func data(
        members: [String: StoredValue], rawMembers: [String: String], respellings: [ExactKey: Respelling]
    ) -> Data {
        // Grouped by `String` equality: each key with its other spellings.
        let others = Dictionary(grouping: respellings.keys.map(\.string), by: { $0 })
        var lines: [[UInt8]] = []
        for key in members.keys.sorted() {
            lines.append(JSONText.memberLine(key: key, value: members[key]!, raw: rawMembers[key]))
            for other in (others[key] ?? []).sorted(by: ExactKey.bytesPrecede) {
                let respelling = respellings[ExactKey(other)]!
                lines.append(JSONText.memberLine(key: other, value: respelling.value, raw: respelling.raw))
            }
        }
        return JSONText.fileData(lines: lines)
    }
}
