/// The file name of a secret's key in a ``FileSecretStore``'s directory.
///
/// Letters, digits, `-`, `_` and `.` stay as they are, except a leading `.`; an upper-case letter becomes `^`
/// and the letter in lower case (so that keys that differ in case stay apart on a file system that ignores
/// case, as macOS's usually does); every other byte of the key's UTF-8 becomes `%` and two hexadecimal digits.
/// So a name never starts with `.` (the store's temporary files do), never holds `/`, and no two keys share
/// one. The empty key is `%`. A name longer than ``maximumLength`` bytes keeps its first part, then `~` and the
/// SHA-256 of the whole key: `~` appears in no other name.
enum SecretFileName {
    /// The longest name kept whole, in bytes: file systems allow 255.
    static let maximumLength = 200
    /// How much of a long name is kept before its digest.
    static let keptPrefixLength = 120

    static func name(forKey key: String) -> String {
        guard !key.isEmpty else { return "%" }
        var name = ""
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "."):
                name += name.isEmpty ? "%2E" : "."
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                name += "^" + String(Unicode.Scalar(byte + 32))
            default:
                let digits = String(byte, radix: 16, uppercase: true)
                name += byte < 16 ? "%0" + digits : "%" + digits
            }
        }
        guard name.utf8.count > maximumLength else { return name }
        // Cut before an escape that would be split, so that the part kept still reads as the key's start.
        var prefix = name.utf8.prefix(keptPrefixLength)
        let escape = prefix.suffix(2).firstIndex(of: UInt8(ascii: "%"))
        if let cut = escape ?? prefix.suffix(1).firstIndex(of: UInt8(ascii: "^")) {
            prefix = prefix[..<cut]
        }
        return String(decoding: prefix, as: UTF8.self) + "~" + SHA256.hexDigest(of: key.utf8)
    }
}
