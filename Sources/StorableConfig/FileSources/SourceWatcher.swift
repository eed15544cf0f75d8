import Foundation

/// Calls `onChange` at each `UserDefaults.didChangeNotification` of one defaults object, as a ``FileWatcher`` calls
/// it at each change of a file: what the managed app configuration is watched by.
final class DefaultsWatcher: SourceWatcher, @unchecked Sendable {
    /// Set once, in `init`; removed by `stop`, under the lock.
    private let observer = Locked<(any NSObjectProtocol)?>(nil)

    init(_ defaults: ManagedDefaults?, onChange: @escaping @Sendable () -> Void) {
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: defaults?.defaults ?? UserDefaults.standard,
            queue: nil
        ) { _ in onChange() }
        observer.withLock { $0 = token }
    }

    /// Stops observing; a notification being delivered meanwhile may still call `onChange` once.
    func stop(waiting: Bool) {
        let token = observer.withLock { observer -> (any NSObjectProtocol)? in
            defer { observer = nil }
            return observer
        }
        if let token { NotificationCenter.default.removeObserver(token) }
    }
}

/// What tells a ``SourceRegistry`` that a source changed: a ``FileWatcher`` for files, a ``DefaultsWatcher`` for the
/// managed app configuration.
protocol SourceWatcher: Sendable {
    /// Stops calling back; `waiting`: until a call under way has returned, where the watcher can tell.
    func stop(waiting: Bool)
}

extension FileWatcher: SourceWatcher {}
