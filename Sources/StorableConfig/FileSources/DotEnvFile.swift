import Foundation

// PLACEHOLDER: replaced by the dotenv branch.
struct DotEnvFile: Sendable {
    struct Entry: Sendable, Equatable {
        let name: String
        let value: String
        let line: Int
    }
    struct Problem: Sendable, Equatable {
        let line: Int
        let reason: String
    }
    let entries: [Entry]
    let problems: [Problem]
    var values: [String: Entry] { Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { $1 }) }
    init(parsing data: Data) {
        var entries: [Entry] = []
        var problems: [Problem] = []
        for (index, line) in String(decoding: data, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        ).enumerated() {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append(Problem(line: index + 1, reason: "no ="))
                continue
            }
            entries.append(
                Entry(name: String(line[..<equals]), value: String(line[line.index(after: equals)...]), line: index + 1)
            )
        }
        self.entries = entries
        self.problems = problems
    }
}
