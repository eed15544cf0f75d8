import Foundation

/// Calls `onChange` at each `UserDefaults.didChangeNotification` of one defaults object, as a ``FileWatcher`` calls
/// it at each change of a file: what the managed app configuration is watched by.
///
/// `@unchecked Sendable`: its one property is set in `init` and never changed, and `NotificationCenter` is
/// thread-safe.
final class DefaultsWatcher: @unchecked Sendable {
    private let observer: any NSObjectProtocol

    init(_ defaults: ManagedDefaults?, onChange: @escaping @Sendable () -> Void) {
        observer = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: defaults?.defaults ?? UserDefaults.standard,
            queue: nil
        ) { _ in onChange() }
    }

    /// Stops observing; a notification being delivered meanwhile may still call `onChange` once.
    func stop() {
        NotificationCenter.default.removeObserver(observer)
    }
}
