import Foundation
import Testing

@testable import StorableConfig

/// The process-wide error handler, in a child process each, since a test's handler would see every other test's
/// reports.
struct ErrorHandlerTests {
    /// Found by the `assign-parsing` fuzz target, which slowed down as it ran: every read of the handler wrapped
    /// the stored closure in two more thunks, so each report went through a longer chain than the last, and a
    /// release build that reported about 45,000 problems overflowed its stack.
    @Test func aReportCostsTheSameHoweverManyCameBefore() async {
        await #expect(processExitsWith: .success) {
            final class Depths: @unchecked Sendable {
                var values: [Int] = []
            }
            let depths = Depths()
            StorableConfig.errorHandler = { _ in depths.values.append(Thread.callStackSymbols.count) }
            let error = StorableConfigError.readFailed(key: "k", reason: "a test")
            for _ in 0..<200 {
                StorableConfig.errorHandler(error)
                StorableConfig.report(error)
            }
            // The 200th report of each kind runs as deep in the stack as the first.
            let values = depths.values
            exit(values.count == 400 && values[398] == values[0] && values[399] == values[1] ? 0 : 1)
        }
    }
}
