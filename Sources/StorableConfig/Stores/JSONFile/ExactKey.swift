/// A settings file's key compared by its UTF-8 bytes.
///
/// Swift's `String` equality, and so a `[String: …]`, takes canonically equivalent texts for one key: "é"
/// precomposed (U+00E9) and "e" with a combining accent (U+0065 U+0301), or the Kelvin sign and "K". A file
/// may hold both spellings as two members, and both must survive a write.
struct ExactKey: Hashable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        for byte in string.utf8 { hasher.combine(byte) }
    }

    /// Whether `lhs`'s bytes sort before `rhs`'s: the order in which a file prints the spellings of one key
    /// after the first.
    static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
