import Foundation

// The one way these tests wait. What they test is that something arrives (a watch event, a member's answer, a
// report), never how fast: etcd's changes reach a store within milliseconds, but CI's machine is shared and loaded,
// and an election or a restarted member takes seconds there, so the limits are generous.

/// Polls `condition` every `interval` seconds until it holds; throws, saying where and what was awaited, if it still
/// does not after `timeout` seconds.
///
/// ```swift
/// try cluster.put("etcd.Limits.maxUploadMB", "75")
/// try waitFor { limits.maxUploadMB == 75 }
/// ```
///
/// To show that something did not happen, wait for a later event that must arrive after it, by the same path,
/// then look: a pause followed by a look proves nothing on a loaded machine.
///
/// - Parameters:
///   - interval: Longer for a condition that costs a request or a process (a member's health).
///   - failure: Added to the error, read when it is thrown: what was awaited, or what was seen instead.
func waitFor(
    timeout: TimeInterval = 20, every interval: TimeInterval = 0.01, failure: @autoclosure () -> String = "",
    fileID: String = #fileID, line: Int = #line, _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        if Date() > deadline {
            let explained = failure()
            throw EtcdTestError(
                description: "\(fileID):\(line): still not so after \(timeout) s"
                    + (explained.isEmpty ? "" : ": \(explained)"))
        }
        usleep(useconds_t(interval * 1_000_000))
    }
}
