/// A store that keeps the text its storage holds for a value that ``StoredValue`` holds only approximately (a JSON
/// file's `999999999999999999999`, read as the `Double` `1e+21`), so that a message can quote what is stored.
protocol OriginalTextSource {
    /// The text of the value stored for `key`, when it differs from the ``StoredValue``'s own text; else `nil`.
    func originalText(forKey key: String) -> String?
}

extension OriginalTextSource {
    /// The original text for `key`, if it is still the text of `found` (a later write may have replaced it).
    func originalText(forKey key: String, of found: StoredValue) -> String? {
        guard let text = originalText(forKey: key), (try? StoredValue(jsonText: text)) == found else { return nil }
        // A file prints containers over several lines; JSON strings hold no line break, so joining the lines
        // without their indentation gives the compact text.
        return text.split(separator: "\n").map { $0.drop { $0 == " " } }.joined()
    }
}
