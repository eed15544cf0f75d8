import Dispatch
import Foundation
import StorableConfig
import StorableConfigEtcd

/// `history` and `rollback`: the revisions a store that keeps history (etcd) still has of a setting.
extension DemoTool {
    /// Prints one line per revision, newest first: the revision and the value (`<redacted>` for a secret); then
    /// the revision the key is at, for `rollback --if-unchanged-since`.
    func history(_ name: String, limit: Int) throws(Failure) {
        let (shortName, setting) = try setting(named: name)
        let entries = try Self.awaiting { try await setting.historyTexts(limit: limit) }
        guard !entries.isEmpty else {
            print("\(shortName) holds no value in \(store), so it has no history")
            return
        }
        for entry in entries {
            let value: String
            if setting.isSecret {
                value = StorableConfigError.redacted
            } else if let text = entry.value {
                value = Self.displayed(text)
            } else {
                value = "\(Self.displayed(entry.text))  (not a value of \(setting.valueTypeName))"
            }
            print("\(entry.revision)  \(value)")
        }
        let current = entries[0].latestRevision
        print(
            "\(shortName) is at revision \(current); to undo a change only if none lands after this: rollback "
                + "\(shortName) <revision> --if-unchanged-since \(current)")
    }

    /// Assigns the value the setting's key held at `revision`, unless the key changed after `seen` (the revision
    /// the operator saw it at, from `history`), or, without it, changes while the command runs.
    func rollBack(_ name: String, to revision: Int64, ifUnchangedSince seen: Int64?) throws(Failure) {
        let (shortName, setting) = try setting(named: name)
        try Self.awaiting { try await setting.rollBack(to: revision, ifUnchangedSince: seen) }
        if writeFailure() == nil {
            let value = setting.isSecret ? StorableConfigError.redacted : Self.displayed(setting.valueText)
            print("\(shortName) = \(value) (its value at revision \(revision))")
        }
    }

    /// Runs `body` and waits for it: the demo's commands run on the main thread, outside any task.
    private static func awaiting<Answer: Sendable>(
        _ body: @escaping @Sendable () async throws -> Answer
    ) throws(Failure) -> Answer {
        let outcome = Outcome<Answer>()
        Task {
            do {
                outcome.result = .success(try await body())
            } catch {
                outcome.result = .failure(error)
            }
            outcome.done.signal()
        }
        outcome.done.wait()
        switch outcome.result {
        case .success(let answer)?: return answer
        case .failure(let error as StorableConfigError)?: throw Failure(message: error.description)
        case .failure(let error)?: throw Failure(message: "\(error)")
        case nil: throw Failure(message: "the store gave no answer")
        }
    }
}

/// What a task left for the main thread: written before `done` is signalled, read after it is waited for,
/// which orders the two (so it is `@unchecked Sendable`).
private final class Outcome<Answer>: @unchecked Sendable {
    var result: Result<Answer, any Error>?
    let done = DispatchSemaphore(value: 0)
}
