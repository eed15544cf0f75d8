import Foundation

/// Type names and phrases as messages print them.
enum TypeName {
    /// The name of `type` as Swift code writes it: `Int`, `Date?`, `[String]`, `[String: Int]`, `Set<URL>`.
    static func of(_ type: Any.Type) -> String {
        swiftStyle(String(describing: type).replacingOccurrences(of: "Swift.", with: ""))
    }

    /// `name` written with sugar: `Optional<X>` as `X?`, `Array<X>` as `[X]`, `Dictionary<K, V>` as `[K: V]`, at
    /// any depth. A name that does not have the expected shape is returned as it is.
    static func swiftStyle(_ name: String) -> String {
        var parser = Parser(characters: Array(name))
        guard let sugared = parser.type(), parser.position == parser.characters.count else { return name }
        return sugared
    }

    /// `phrase` after "a" or "an", chosen by how it is read aloud: "an Int", "an Income", "a String", "a URL",
    /// "a UInt8", "a Date?", "a dictionary of records"; "a [String]" and "a [String: Int]", as "a string array"
    /// and "a dictionary" are read.
    static func withArticle(_ phrase: String) -> String {
        "\(startsWithVowelSound(phrase) ? "an" : "a") \(phrase)"
    }

    private static func startsWithVowelSound(_ phrase: String) -> Bool {
        let characters = Array(phrase)
        guard let first = characters.first else { return false }
        // An upper-case U followed by another capital, or UInt, is spelled out: "you".
        if first == "U", characters.count > 1, characters[1].isUppercase || phrase.hasPrefix("UInt") {
            return false
        }
        return "AEIOUaeiou".contains(first)
    }

    /// A recursive-descent reader of `Name<Argument, …>` names, printing them with sugar.
    private struct Parser {
        let characters: [Character]
        var position = 0

        mutating func type() -> String? {
            var name = ""
            while position < characters.count, !"<>,".contains(characters[position]) {
                name.append(characters[position])
                position += 1
            }
            name = name.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            guard position < characters.count, characters[position] == "<" else { return name }
            position += 1
            var arguments: [String] = []
            while true {
                guard let argument = type() else { return nil }
                arguments.append(argument)
                guard position < characters.count else { return nil }
                if characters[position] == "," {
                    position += 1
                    continue
                }
                guard characters[position] == ">" else { return nil }
                position += 1
                break
            }
            switch (name, arguments.count) {
            case ("Optional", 1):
                // A function type, an existential `any P` and a composition `P & Q` need parentheses before `?`.
                let wrapped = arguments[0]
                let needsParentheses = wrapped.contains("->") || wrapped.hasPrefix("any ") || wrapped.contains(" & ")
                return needsParentheses ? "(\(wrapped))?" : "\(wrapped)?"
            case ("Array", 1): return "[\(arguments[0])]"
            case ("Dictionary", 2): return "[\(arguments[0]): \(arguments[1])]"
            default: return "\(name)<\(arguments.joined(separator: ", "))>"
            }
        }
    }
}
