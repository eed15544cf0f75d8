#if canImport(Darwin)
    import Darwin
    import Dispatch
    #if canImport(notify)
        import notify
    #endif

    /// The Darwin notification `"StorableConfig.changed.<suite>"`, which every `UserDefaultsStore` on a suite
    /// posts after each write and receives from every process (an app, its widgets and its extensions), so that a
    /// write by one reaches the configs of the others as an ordinary outside change.
    ///
    /// Why not key-value observing of the suite's keys, which Apple's `UserDefaults` supports across processes:
    /// the keys contain dots (`group.com.example.AppConfig.userName`), and `addObserver(_:forKeyPath:)` reads a
    /// dot as a key-path separator, so it cannot observe them. A Darwin notification carries no data: the
    /// receiver reads its known keys again and announces those that differ (`announceOutsideChanges()`), which
    /// makes its own notification, which reaches it too, no change.
    ///
    /// Only processes that use the library post it: a write by code that does not (a widget reading and writing
    /// `UserDefaults` itself) is seen at the next `reload()` or the next notification.
    final class SuiteChangeNotice: Sendable {
        /// One name per suite, so that stores on other suites are not woken.
        let name: String
        /// The registration, or `nil` if `notifyd` refused it; other processes' writes are then seen at
        /// `reload()`.
        private let token: Int32?

        /// Registers for the suite's notification; `received` runs on a serial queue of the library's, where
        /// no lock of the library is held.
        init(suiteName: String, received: @escaping @Sendable () -> Void) {
            let name = "StorableConfig.changed." + suiteName
            self.name = name
            var token: Int32 = 0
            let status = notify_register_dispatch(name, &token, Self.queue) { _ in
                received()
                // `UserDefaults` changes a value "asynchronously to persistent storage and other processes":
                // the writer's change may reach this process after its notification, so read once more later.
                Self.queue.asyncAfter(deadline: .now() + 0.5, execute: received)
            }
            self.token = status == NOTIFY_STATUS_OK ? token : nil
        }

        deinit {
            if let token { _ = notify_cancel(token) }
        }

        /// Tells every store on the suite, in every process, to read its keys again.
        func post() {
            _ = notify_post(name)
        }

        private static let queue = DispatchQueue(label: "StorableConfig.UserDefaultsStore.suiteChanges")
    }
#endif
