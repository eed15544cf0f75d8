import Foundation
import StorableConfig

/// Collects what the library reports: warnings are printed at once, failed writes end the command with
/// status 1.
final class ReportedProblems: @unchecked Sendable {
    private let lock = NSLock()
    private var writeFailures: [StorableConfigError] = []

    func add(_ error: StorableConfigError) {
        switch error {
        case .writeFailed, .encodingFailed:
            lock.withLock { writeFailures.append(error) }
        default:
            FileHandle.standardError.write(Data("storable-config-demo: warning: \(error)\n".utf8))
        }
    }

    var firstWriteFailure: StorableConfigError? {
        lock.withLock { writeFailures.first }
    }
}
