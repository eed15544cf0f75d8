import Foundation
import StorableConfigEtcd
import Testing

/// The seeds of the etcd fuzz targets (Fuzz/Corpus) and every input that ever failed one (Fuzz/Regressions), each
/// through the same check as its target (Tests/StorableConfigEtcdTests/Fuzzing). See Docs/Fuzzing.md.
struct EtcdFuzzRegressionTests {
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
        for target in ["etcd-response", "etcd-answer", "etcd-pem"] {
            #expect(Self.inputs(of: target).contains { $0.hasPrefix("Corpus/") }, "\(target)")
        }
    }

    @Test(arguments: inputs(of: "etcd-response"))
    func etcdResponse(input: String) throws {
        try Self.check(input, with: EtcdResponseFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "etcd-answer"))
    func etcdAnswer(input: String) throws {
        try Self.check(input, with: EtcdAnswerFuzzCheck.failure(for:))
    }

    @Test(arguments: inputs(of: "etcd-pem"))
    func etcdPEM(input: String) throws {
        try Self.check(input, with: PEMFuzzCheck.failure(for:))
    }
}
