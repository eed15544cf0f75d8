/// Text written into an XML 1.0 document, escaped so that a parser reads back exactly what was given.
enum XMLText {
    /// `text` escaped as character data or, with `inAttribute`, as an attribute value in double or single
    /// quotes; `nil` if it holds a character that XML 1.0 cannot carry in any form (a control character other
    /// than tab, line feed and carriage return, U+FFFE or U+FFFF; not even as a character reference).
    ///
    /// A carriage return is always a character reference, which a parser keeps (a literal one becomes a line
    /// feed); in an attribute, so are tabs and line feeds, which a parser would otherwise read as spaces.
    static func escaped(_ text: String, inAttribute: Bool = false) -> String? {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            // `>` too, so that `]]>` never appears in character data.
            case ">": escaped += "&gt;"
            case "\"": escaped += inAttribute ? "&quot;" : "\""
            case "'": escaped += inAttribute ? "&apos;" : "'"
            case "\r": escaped += "&#xD;"
            case "\n": escaped += inAttribute ? "&#xA;" : "\n"
            case "\t": escaped += inAttribute ? "&#x9;" : "\t"
            default:
                guard isAllowed(scalar) else { return nil }
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `text` escaped as ``escaped(_:inAttribute:)`` does, with each character that XML 1.0 cannot carry
    /// replaced by U+FFFD, for text that a person reads (a label, a description), where a visible mark is better
    /// than losing the whole text.
    static func readable(_ text: String, inAttribute: Bool = false) -> String {
        let kept = String.UnicodeScalarView(
            text.unicodeScalars.map { isAllowed($0) || $0 == "\t" || $0 == "\n" || $0 == "\r" ? $0 : "\u{FFFD}" })
        return escaped(String(kept), inAttribute: inAttribute) ?? ""
    }

    /// `text` as the inside of a comment (`<!-- … -->`), which holds no escapes: characters XML cannot carry
    /// become U+FFFD, and `--`, which a comment may not hold, or a `-` at its end, are split by a space.
    static func comment(_ text: String) -> String {
        var kept = ""
        for scalar in text.unicodeScalars {
            let allowed = isAllowed(scalar) || scalar == "\t" || scalar == "\n"
            if scalar == "-" && kept.hasSuffix("-") { kept += " " }
            kept.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
        }
        return kept.hasSuffix("-") ? kept + " " : kept
    }

    /// Whether XML 1.0 allows `scalar` as it is, tab, line feed and carriage return aside.
    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF
    }
}
