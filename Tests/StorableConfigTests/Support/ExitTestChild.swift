import Foundation

/// What an exit test's child process does where it could fail: each failure ends the child with a status of its
/// own and a line on standard error saying why. A trap (`try!`) would end it with a signal that says nothing of
/// the cause, and the test would report only `.signal(SIGILL)`.
enum ExitTestChild {
    /// Ends the child with `status`, saying why on standard error.
    static func fail(_ status: Int32, _ why: String) -> Never {
        FileHandle.standardError.write(Data("exit test child: \(why)\n".utf8))
        exit(status)
    }

    /// Returns what `body` returns, or ends the child with `status`, naming `what` failed and why.
    static func attempt<Result>(_ status: Int32, _ what: String, _ body: () throws -> Result) -> Result {
        do {
            return try body()
        } catch {
            fail(status, "\(what) failed: \(error)")
        }
    }
}
