import Foundation
import StorableConfig
import Testing

/// The seeds of the fuzz targets (Fuzz/Corpus) and every input that ever failed one (Fuzz/Regressions), each
/// through the same check as its target (Tests/StorableConfigTests/Fuzzing). See Docs/Fuzzing.md.
struct FuzzRegressionTests {
    /// The repository's Fuzz folder, found from this file's place in the source tree.
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// The inputs of `target`, as paths under Fuzz/: its seeds, then the inputs that once failed it.
    static func inputs(of target: String) -> [String] {
        ["Corpus", "Regressions"].flatMap { folder in
            let names =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: fuzzFolder.appendingPathComponent("\(folder)/\(target)").path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\(target)/\($0)" }
        }
    }

    static func check(_ input: String, with check: (Data) -> String?) throws {
        let data = try Data(contentsOf: fuzzFolder.appendingPathComponent(input))
        let failure = check(data)
        #expect(failure == nil, "\(input): \(failure ?? "")")
    }

    @Test func everyTargetHasSeeds() {
        for target in ["json-text", "iso8601", "document-import", "assign-parsing", "dotenv", "evolving-values"] {
            #expect(Self.inputs(of: target).contains { $0.hasPrefix("Corpus/") }, "\(target)")
        }
    }

    @Test(arguments: inputs(of: "json-text"))
    func jsonText(input: String) throws {
        try Self.check(input, with: JSONTextFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "iso8601"))
    func iso8601(input: String) throws {
        try Self.check(input, with: ISO8601FuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "document-import"))
    func documentImport(input: String) throws {
        try Self.check(input, with: DocumentImportFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "assign-parsing"))
    func assignParsing(input: String) throws {
        try Self.check(input, with: AssignParsingFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "evolving-values"))
    func evolvingValues(input: String) throws {
        try Self.check(input, with: EvolvingValuesFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "dotenv"))
    func dotEnv(input: String) throws {
        try Self.check(input, with: DotEnvFuzzCheck.failure(for:))
    }
}
