import Foundation
import StorableConfig

@testable import StorableConfigCloud

/// Every problem reported through `StorableConfig.errorHandler`, for tests to look up by key.
enum ReportedErrors {
    private static let collected = Locked<[StorableConfigError]>([])
    /// The reports of the test running `collecting(_:)` on this task: the tests run in parallel, and count reports.
    @TaskLocal private static var sink: Locked<[StorableConfigError]>?
    private static let installed: Bool = {
        let previous = StorableConfig.errorHandler
        StorableConfig.errorHandler = { error in
            ReportedErrors.collected.withLock { $0.append(error) }
            ReportedErrors.sink?.withLock { $0.append(error) }
            previous(error)
        }
        return true
    }()

    static func install() { _ = installed }

    static func mentioning(_ text: String) -> [StorableConfigError] {
        collected.withLock { $0.filter { $0.description.contains(text) } }
    }

    /// Runs `body`, and returns what was reported on this task meanwhile (the simulated cloud calls the sync on
    /// the thread that delivers, so that is all a test's devices report).
    static func collecting(_ body: () throws -> Void) rethrows -> Reports {
        install()
        let sink = Locked<[StorableConfigError]>([])
        try $sink.withValue(sink) { try body() }
        return Reports(errors: sink.withLock { $0 })
    }

    /// The reports of one test.
    struct Reports {
        let errors: [StorableConfigError]

        /// The reports whose description contains each of `texts`.
        func mentioning(_ texts: String...) -> [StorableConfigError] {
            errors.filter { error in texts.allSatisfy { error.description.contains($0) } }
        }
    }
}
