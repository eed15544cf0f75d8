import Foundation

import StorableConfig

/// The check of the `document-import` fuzz target (Fuzz/Targets/DocumentImportTarget.swift), also run by
/// `swift test` over its seed corpus and every input that ever failed it: a settings document to import.
///
/// - Reading the text as a ``ConfigDocument`` never crashes; a document prints as text that reads back as
///   the same document, and prints the same text again.
/// - Applying it to ``FuzzTypesConfig`` and ``FuzzMigratedConfig`` (merging and replacing) never crashes; if it
///   throws, the store is as it was (all or nothing); if it succeeds, exporting the configs and importing the
///   export into a fresh store gives the same export.
enum DocumentImportFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        guard let document = try? ConfigDocument(jsonText: text)
        else { return nil }
        let printed = document.jsonText()
        guard let again = try? ConfigDocument(jsonText: printed) else {
            return "the document's own text does not read back: \(printed.prefix(200))"
        }
        if again.jsonText() != printed { return "the document's text reads back as another document" }
        for mode in [ConfigDocument.ImportMode.merge, .replace] {
            if let problem = applyFailure(document, mode: mode) { return "\(mode): \(problem)" }
        }
        return nil
    }

    private static func applyFailure(_ document: ConfigDocument, mode: ConfigDocument.ImportMode) -> String? {
        let store = InMemoryStore()
        let types = FuzzTypesConfig(store: store)
        let migrated = FuzzMigratedConfig(store: store)
        types.string = "kept"
        types.strings = ["a", "b"]
        migrated.limit = 20
        let before = store.allValues
        do {
            try document.apply(to: [types, migrated], mode: mode)
        } catch {
            guard case .doesNotFit = error else { return "the import threw \(error)" }
            return store.allValues == before ? nil : "a refused import changed the store"
        }
        do {
            let exported = try ConfigDocument(exporting: [types, migrated], includingSecrets: true)
            let fresh = InMemoryStore()
            let copies: [StorableConfig] = [FuzzTypesConfig(store: fresh), FuzzMigratedConfig(store: fresh)]
            try exported.apply(to: copies, mode: .replace)
            let reexported = try ConfigDocument(exporting: copies, includingSecrets: true)
            if reexported.jsonText() != exported.jsonText() {
                return "an export imported into a fresh store exports differently"
            }
        } catch {
            return "the export of an imported document does not import: \(error)"
        }
        return nil
    }
}
