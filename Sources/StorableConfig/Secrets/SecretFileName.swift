/// The file name of a secret's key in a ``FileSecretStore``'s directory, and back.
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

    /// The key whose file is named `name`, or `nil` for a long key's name (which keeps only the digest of the
    /// whole key) and for a name that no key gives (a temporary file, a file someone else put there).
    static func key(forName name: String) -> String? {
        guard name != "%" else { return "" }
        guard !name.hasPrefix("."), !name.contains("~") else { return nil }
        var bytes: [UInt8] = []
        var iterator = name.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            case UInt8(ascii: "^"):
                guard let letter = iterator.next(), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter) else {
                    return nil
                }
                bytes.append(letter - 32)
            default:
                bytes.append(byte)
            }
        }
        let key = String(decoding: bytes, as: UTF8.self)
        return Self.name(forKey: key) == name ? key : nil
    }
}
