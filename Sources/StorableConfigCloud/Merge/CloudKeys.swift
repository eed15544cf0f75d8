/// The key-value cloud's limits, and how a setting's key becomes a cloud key within them.
///
/// Apple's `NSUbiquitousKeyValueStore` takes keys of at most 64 bytes of UTF-8, at most 1,024 keys, and 1 MB in
/// all (keys and values). A setting's key (`com.example.app.AppConfig.userName`) of up to 64 bytes is its cloud
/// key. A longer one becomes `~` + 16 hexadecimal digits of its 64-bit FNV-1a hash + `.` + as much of its end as
/// fits: `~9f2c61d0b87e4a13.NotificationPreferencesConfig.remindersForWeekendMornings` is too long, so the end is
/// cut at a Unicode scalar boundary to 64 bytes. The hash is computed from the key's bytes by a fixed function, so
/// every version of the app on every device maps a key the same way; the cloud value names the full key, so
/// that a cloud key maps back to its setting (and a value under a mapped key that names another key is refused).
public enum CloudLimits {
    /// The most bytes of UTF-8 in a key: 64.
    public static let keyBytes = 64
    /// The most keys: 1,024.
    public static let keyCount = 1024
    /// The most bytes of keys and values in all: 1 MB (1,048,576 bytes).
    public static let totalBytes = 1_048_576

    /// The cloud key of a setting's key.
    public static func cloudKey(for key: String) -> String {
        guard key.utf8.count > keyBytes else { return key }
        let prefix = "~" + hex(fnv1a(key)) + "."
        // Cut at a Unicode scalar, not a character: where characters end depends on the Unicode version.
        var end = Substring(key).unicodeScalars
        while prefix.utf8.count + String(end).utf8.count > keyBytes { end = end.dropFirst() }
        return prefix + String(end)
    }

    /// FNV-1a, 64 bits: fixed, unlike Swift's seeded `Hasher`.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
