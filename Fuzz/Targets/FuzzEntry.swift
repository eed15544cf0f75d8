import Foundation

@testable import StorableConfig

/// What every fuzz target's entry point does with one input: runs the target's check, and stops the process
/// with the check's message if it fails, so that libFuzzer keeps the input as a crash.
enum FuzzEntry {
    /// Reports go nowhere: a fuzzed input is expected to be reported, and libFuzzer's output stays readable.
    private static let quietReports: Void = {
        StorableConfig.errorHandler = { _ in }
    }()

    /// Runs `check` on the `count` bytes at `bytes`; returns 0, as libFuzzer asks.
    static func run(_ bytes: UnsafePointer<UInt8>?, _ count: Int, _ check: (Data) -> String?) -> CInt {
        _ = quietReports
        let input = bytes.map { Data(bytes: $0, count: count) } ?? Data()
        if let failure = check(input) { fatalError("fuzz check failed: \(failure)") }
        return 0
    }
}
