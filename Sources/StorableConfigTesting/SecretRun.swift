import Dispatch
import Foundation
import StorableConfig
import StorableConfigSecrets

/// One run of the checks over one secret store, collecting problems.
struct SecretRun {
    let store: any SecretStore
    let prefix: String
    /// Text in every secret the run writes, which no error and no description may show.
    let marker = "secret-\(UUID().uuidString)"
    var problems: [String] = []
    private var usedKeys: Set<String> = []

    init(store: any SecretStore, prefix: String) {
        self.store = store
        self.prefix = prefix
    }

    mutating func check(_ name: String, _ body: (inout SecretRun) throws -> Void) {
        do {
            try body(&self)
        } catch let failure as CheckFailure {
            problems.append("\(name): \(failure.message)")
        } catch {
            problems.append("\(name): the store threw \(shown(error))")
        }
    }

    /// An error as a message shows it, or a note that it shows a secret (and not the secret).
    func shown(_ error: any Error) -> String {
        let text = "\(error) \(String(reflecting: error))"
        return text.contains(marker) ? "an error that shows a secret's bytes" : "\(error)"
    }

    /// A key of this run's own.
    mutating func key(_ name: String) -> String {
        let key = prefix + name
        usedKeys.insert(key)
        return key
    }

    /// A secret that holds the marker.
    func secret(_ text: String) -> Data {
        Data("\(marker) \(text)".utf8)
    }

    func expect(_ condition: Bool, _ message: @autoclosure () throws -> String) throws {
        if !condition { throw CheckFailure(message: try message()) }
    }

    func cleanUp() {
        for key in usedKeys { try? store.removeSecret(forKey: key) }
    }

    func read(_ key: String) throws -> String {
        guard let data = try store.secret(forKey: key) else { return "nothing" }
        return data.count > 64 ? "\(data.count) bytes" : "bytes \(Array(data))"
    }

    // MARK: The checks

    mutating func everyKindReadsBack() throws {
        let kinds: [(String, Data)] = [
            ("empty", Data()),
            ("text", secret("plain")),
            ("every-byte", Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })),
            ("odd-unicode", secret("é e\u{301} 🎌 \u{202E} \u{FEFF} \0 \u{10FFFF}")),
            ("large", Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) })),
        ]
        for (name, data) in kinds { try store.setSecret(data, forKey: key(name)) }
        for (name, data) in kinds {
            let found = try store.secret(forKey: key(name))
            try expect(found == data, "\(name): wrote \(data.count) bytes, read \(try read(key(name)))")
        }
    }

    mutating func replacesAndRemoves() throws {
        let key = key("replaced")
        try expect(try store.secret(forKey: key) == nil, "a key never written reads \(try read(key))")
        try store.setSecret(secret("first"), forKey: key)
        try store.setSecret(secret("second"), forKey: key)
        try expect(try store.secret(forKey: key) == secret("second"), "after two writes, read \(try read(key))")
        try store.removeSecret(forKey: key)
        try expect(try store.secret(forKey: key) == nil, "after removeSecret(forKey:), read \(try read(key))")
        try store.removeSecret(forKey: key)
    }

    mutating func addsOnlyWhenAbsent() throws {
        let key = key("added")
        try expect(try store.addSecret(secret("first"), forKey: key), "adding to an empty key returned false")
        try expect(!(try store.addSecret(secret("second"), forKey: key)), "adding to a held key returned true")
        try expect(try store.secret(forKey: key) == secret("first"), "after a refused add, read \(try read(key))")
        try store.removeSecret(forKey: key)
        try expect(try store.addSecret(Data(), forKey: key), "adding after a removal returned false")
        try expect(try store.secret(forKey: key) == Data(), "an added empty secret read \(try read(key))")
    }

    mutating func concurrentAddsHaveOneWinner() throws {
        let key = key("contended")
        let store = store
        let marker = marker
        let results = Failures()
        DispatchQueue.concurrentPerform(iterations: 32) { index in
            do {
                if try store.addSecret(Data("\(marker) \(index)".utf8), forKey: key) { results.add("\(index)") }
            } catch {
                results.add("error: \(error)")
            }
        }
        let winners = results.all
        try expect(winners.count == 1, "\(winners.count) of 32 adds succeeded (or threw)")
        try expect(
            try store.secret(forKey: key) == Data("\(marker) \(winners[0])".utf8),
            "the key holds \(try read(key)), not the winner's bytes")
    }

    mutating func oddKeysStayApart() throws {
        let long = String(repeating: "long-key.", count: 120)
        let names = [
            "", "/", "a/b", "a%2Fb", "..", ".", "../../escape", "./.hidden", ".secret.1.1.tmp", "Case", "case",
            "^case", "%43ase", "é", "🎌 ✓", "\u{202E}rtl", "tab\tnew\nline", "~", long + "a", long + "b",
            "a" + long, "b" + long, String(repeating: "ü", count: 1000),
        ]
        let keys = names.map { key($0) }
        for (index, key) in keys.enumerated() { try store.setSecret(secret("\(index)"), forKey: key) }
        for (index, key) in keys.enumerated() {
            try expect(
                try store.secret(forKey: key) == secret("\(index)"),
                "the key \(key.debugDescription.prefix(80)) read \(try read(key)), not what it was given")
        }
    }

    mutating func concurrentWritesLoseNothing() throws {
        let keys = (0..<64).map { key("thread-\($0)") }
        let store = store
        let marker = marker
        let results = Failures()
        DispatchQueue.concurrentPerform(iterations: keys.count) { index in
            do {
                try store.setSecret(Data("\(marker) \(index)".utf8), forKey: keys[index])
            } catch {
                results.add("\(error)")
            }
        }
        try expect(results.all.isEmpty, "writes threw: \(results.all.count)")
        let lost = try keys.indices.filter { try store.secret(forKey: keys[$0]) != Data("\(marker) \($0)".utf8) }
        try expect(lost.isEmpty, "\(lost.count) of \(keys.count) writes from concurrent threads were lost")
    }

    mutating func laterStoreReads(_ later: any SecretStore) throws {
        let key = key("persisted")
        try store.setSecret(secret("kept"), forKey: key)
        try expect(try later.secret(forKey: key) == secret("kept"), "a store made later read \(try read(key))")
    }

    func descriptionHidesSecrets() throws {
        try expect(!store.description.contains(marker), "the description shows a secret: it must not")
    }
}
