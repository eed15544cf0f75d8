import Foundation
import StorableConfig

@testable import StorableConfigCloud

/// Every problem reported through `StorableConfig.errorHandler`, for tests to look up by key.
enum ReportedErrors {
    private static let collected = Locked<[StorableConfigError]>([])
    private static let installed: Bool = {
        let previous = StorableConfig.errorHandler
        StorableConfig.errorHandler = { error in
            ReportedErrors.collected.withLock { $0.append(error) }
            previous(error)
        }
        return true
    }()

    static func install() { _ = installed }

    static func mentioning(_ text: String) -> [StorableConfigError] {
        collected.withLock { $0.filter { $0.description.contains(text) } }
    }
}
