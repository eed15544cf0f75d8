import Foundation

extension StorableConfig {
    private static let defaultStoreStorage = Locked<(any ConfigStore)?>(nil)
    private static let errorHandlerStorage = Locked(ErrorHandler(handle: printToStandardError))
    private static let defaultNamespaceStorage = Locked<String?>(nil)

    /// The bundle identifier, or the executable's name where there is no bundle identifier.
    private static let packagingNamespace: String = {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        let name = ProcessInfo.processInfo.processName
        return name.isEmpty ? "StorableConfig" : name
    }()

    /// The handler in a struct: a closure held as `Locked`'s generic value is reabstracted for each access, and the
    /// write-back wrapped it in two more thunks every time it was read, so each report ran through a longer chain
    /// than the last, until the stack overflowed (after about 45,000 reports in a release build).
    private struct ErrorHandler {
        let handle: @Sendable (StorableConfigError) -> Void
    }

    /// The store used by ``init()``.
    ///
    /// Inside a scope of ``withDefaults(_:operation:)`` (a test under `.isolatedSettings`), it is the scope's store.
    /// Under a test runner (XCTest, `swift test`), unless you set another, it is an ``InMemoryStore`` shared by
    /// the process, so that tests never write into the user's home; the environment variable
    /// `STORABLE_CONFIG_DEFAULT_STORE` chooses otherwise: `platform` for the store below, `memory` for an
    /// ``InMemoryStore`` in any program.
    ///
    /// Otherwise, unless you set another first, it is `UserDefaults.standard` on Apple platforms, and elsewhere a
    /// ``JSONFileStore`` at `$XDG_CONFIG_HOME/<defaultNamespace>/settings.json` (`~/.config/…` when
    /// `XDG_CONFIG_HOME` is not set): UserDefaults on Linux keeps nothing unless it is synchronized, and
    /// loses data to a corrupt or concurrently written file, which the JSON file store guards against.
    /// If that file cannot be used, or the namespace cannot name its directory (it is not a single path
    /// component: `..`, `a/b`), the problem is reported and the settings live in memory.
    ///
    /// Set it at start-up, before the first config is created, to choose another store for the process.
    public static var defaultStore: any ConfigStore {
        get {
            if let scoped = ConfigDefaults.current { return scoped.store }
            // Read before the lock, which must not be held while another is taken.
            let namespace = defaultNamespace
            return OutsideLocks.deferring {
                defaultStoreStorage.withLock { store in
                    if let store { return store }
                    let created = makeDefaultStore(namespace: namespace)
                    store = created
                    return created
                }
            }
        }
        set { defaultStoreStorage.withLock { $0 = newValue } }
    }

    /// The ``namespace`` of every config class that does not override it: unless set, the bundle identifier, or
    /// the executable's name where there is no bundle identifier.
    ///
    /// An app and its widgets or extensions have different bundle identifiers, so by default they read and
    /// write different keys even in a shared app-group suite. Set one namespace in each of them, at start-up,
    /// before the first config is created (a class's keys are worked out once, when its first config is made;
    /// on Linux the default store's file is named after the namespace when it is first used):
    ///
    /// ```swift
    /// StorableConfig.defaultNamespace = "com.example.app"
    /// StorableConfig.defaultStore = UserDefaultsStore(suiteName: "group.com.example.app")!
    /// ```
    ///
    /// - Precondition: The namespace is not empty.
    public static var defaultNamespace: String {
        get { defaultNamespaceStorage.withLock { $0 } ?? packagingNamespace }
        set {
            precondition(!newValue.isEmpty, "StorableConfig.defaultNamespace cannot be empty")
            defaultNamespaceStorage.withLock { $0 = newValue }
        }
    }

    /// Receives every problem that reading or writing a setting meets: a stored value of the wrong type, a
    /// failed write, a corrupt file moved aside.
    ///
    /// The default prints the error's description to standard error. Replace it to log elsewhere:
    ///
    /// ```swift
    /// StorableConfig.errorHandler = { error in logger.warning("\(error)") }
    /// ```
    ///
    /// This is the process's handler, also inside a scope of ``withDefaults(_:operation:)``, whose reports go to
    /// the scope's handler instead (``report(_:)``): a handler that chains to the one it replaces keeps chaining
    /// to the process's.
    public static var errorHandler: @Sendable (StorableConfigError) -> Void {
        get { errorHandlerStorage.withLock { $0.handle } }
        set { errorHandlerStorage.withLock { $0 = ErrorHandler(handle: newValue) } }
    }

    /// Reports a problem: to the error handler of the scope that the current code runs in
    /// (``withDefaults(_:operation:)``), else to ``errorHandler``. Reported from inside one of the library's
    /// locks, it waits until this thread has left them, since a handler is code of yours. The package's other
    /// modules report through it, and so may a store or a provider that you write.
    public static func report(_ error: StorableConfigError) {
        OutsideLocks.report(error)
    }

    /// The handler that a report made now goes to: the scope's, else the process's.
    static var currentErrorHandler: @Sendable (StorableConfigError) -> Void {
        ConfigDefaults.current?.errorHandler ?? errorHandler
    }

    /// Whether the process is a test runner: XCTest under Xcode, `swift test`'s runner (`<Package>PackageTests.xctest`
    /// on Linux, `xctest` or `swiftpm-testing-helper` on macOS).
    private static var isRunningUnderTestRunner: Bool {
        let environment = ProcessInfo.processInfo.environment
        if environment["XCTestConfigurationFilePath"] != nil || environment["XCTestSessionIdentifier"] != nil {
            return true
        }
        let name = ProcessInfo.processInfo.processName
        return name.hasSuffix(".xctest") || name == "xctest" || name == "swiftpm-testing-helper"
    }

    private static func printToStandardError(_ error: StorableConfigError) {
        FileHandle.standardError.write(Data("StorableConfig: \(error)\n".utf8))
    }

    private static func makeDefaultStore(namespace: String) -> any ConfigStore {
        switch ProcessInfo.processInfo.environment["STORABLE_CONFIG_DEFAULT_STORE"] {
        case "memory"?: return InMemoryStore()
        case "platform"?: break
        case nil: if isRunningUnderTestRunner { return InMemoryStore() }
        case let other?:
            report(
                .invalidOverride(
                    origin: "environment variable STORABLE_CONFIG_DEFAULT_STORE", key: "the default store",
                    value: String(other.prefix(80)),
                    reason: "it is neither 'platform' nor 'memory', so configs created without a store keep their "
                        + "values in memory"))
            return InMemoryStore()
        }
        #if canImport(Darwin)
            return UserDefaultsStore(.standard)
        #else
            do {
                return try JSONFileStore(namespace: namespace)
            } catch let error as StorableConfigError {
                report(error)
            } catch {
                report(
                    .fileUnusable(path: JSONFileStore.defaultURL(namespace: namespace).path, reason: "\(error)"))
            }
            return InMemoryStore()
        #endif
    }
}
