import Foundation

/// A store that keeps settings in `UserDefaults`, where other code reading the same keys sees plain
/// property-list values: a string as a string, an array as an array.
///
/// ```swift
/// let config = AppConfig(store: UserDefaultsStore(.standard))
/// UserDefaults.standard.string(forKey: config.$userName.key)  // what config.userName holds
/// ```
///
/// How values are kept:
/// - Booleans, integers, doubles, strings, data, arrays and dictionaries as themselves; a `Float` as the
///   `Double` nearest its decimal text (0.1, not 0.10000000149011612); a `URL` as its absolute string.
/// - A `Date` as a date on Apple platforms; on Linux as ISO 8601 text with full precision, because the
///   property-list file of corelibs Foundation cuts dates to whole seconds.
/// - An explicit "no value" (`nil` assigned to an optional whose default is not `nil`) as the string
///   ``nullMarker``, since property lists have no null.
///
/// What `UserDefaults` would refuse is reported, not lost: a suite it cannot open (``init(suiteName:saving:)``
/// reports ``StorableConfigError/suiteUnavailable(suiteName:reason:)`` and returns `nil`), and a value over the
/// platform's size limit (512 KB on tvOS, 4 MiB on iOS, watchOS and visionOS, none on macOS and Linux: the write
/// throws ``StorableConfigError/writeFailed(key:reason:)`` naming the key, and nothing is handed to
/// `UserDefaults`).
///
/// On Linux, corelibs `UserDefaults` writes nothing to disk until `synchronize()` is called. This store
/// therefore saves what it wrote: by default within a quarter of a second, on a background queue, and at a
/// normal process exit (``Saving/coalesced``), which costs a write what a plain `UserDefaults.set` costs;
/// or before each write returns (``Saving/onEveryWrite``), which costs what `set` + `synchronize()` costs. On
/// Apple platforms `UserDefaults` saves by itself and both behave the same.
public final class UserDefaultsStore: IdentifiedConfigStore, @unchecked Sendable, CustomStringConvertible {
    /// The string stored for an explicit "no value".
    public static let nullMarker = "<StorableConfig.null>"

    /// When writes are saved to disk on Linux.
    public enum Saving: Sendable {
        /// Soon after writes (within a quarter of a second), once for many writes, and at a normal exit.
        case coalesced
        /// Before every write returns.
        case onEveryWrite
    }

    /// The defaults database this store reads and writes.
    public let defaults: UserDefaults
    /// When writes are saved to disk on Linux.
    public let saving: Saving
    /// The largest value written, in bytes of its property-list form (`estimatedSize(of:)`), or `nil`.
    let valueSizeLimit: Int?
    /// The name of the persistent domain that `defaults` writes, when known: that of `.standard` or of a
    /// suite opened with ``init(suiteName:saving:)``.
    private let domainName: String?

    /// What this store last read or wrote for each key it was asked about: a `didChangeNotification` does not
    /// say which keys changed, so the store compares.
    let known = Locked<[String: StoredValue?]>([:])
    /// The observer of `didChangeNotification` for `defaults`; set once, in `init`.
    private var observation: (any NSObjectProtocol)?
    #if canImport(Darwin)
        /// For a suite opened with ``init(suiteName:saving:)``: the notification that other processes' stores
        /// on the suite post after writing, and this store posts after its own writes; set once, in `init`.
        var suiteNotice: SuiteChangeNotice?
    #endif

    /// The name of the suite that ``defaults`` reads and writes, when it was opened with
    /// ``init(suiteName:saving:)``; `nil` for `.standard` and other defaults.
    public var suiteName: String? { defaults === UserDefaults.standard ? nil : domainName }

    /// Creates a store over `defaults` that saves writes as `saving` says. Secret settings are kept in `defaults`
    /// like any value: to keep them apart, wrap the store in `SecretRoutingStore` (the `StorableConfigSecrets`
    /// library).
    public convenience init(_ defaults: UserDefaults, saving: Saving = .coalesced) {
        self.init(defaults, saving: saving, valueSizeLimit: Self.platformValueSizeLimit)
    }

    /// Creates a store that refuses values over `valueSizeLimit` bytes: the platform's limit, or a test's.
    init(_ defaults: UserDefaults, saving: Saving, valueSizeLimit: Int?) {
        self.defaults = defaults
        self.saving = saving
        self.valueSizeLimit = valueSizeLimit
        if defaults === UserDefaults.standard {
            #if canImport(Darwin)
                // A command-line tool has no bundle identifier: `UserDefaults.standard` then writes the domain
                // named after the process (~/Library/Preferences/<processName>.plist).
                domainName = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
            #else
                // What corelibs Foundation names the application's domain (its file is `<processName>.plist`).
                domainName = "kCFPreferencesCurrentApplication"
            #endif
        } else {
            domainName = Self.suiteName(of: defaults)
        }
        observation = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: defaults, queue: nil
        ) { [weak self] _ in
            self?.announceOutsideChanges()
        }
        #if canImport(Darwin)
            // A suite is the only domain that another process (a widget, an extension) writes too.
            if defaults !== UserDefaults.standard, let suiteName = domainName {
                suiteNotice = SuiteChangeNotice(suiteName: suiteName) { [weak self] in
                    self?.announceOutsideChanges()
                }
            }
        #endif
    }

    deinit {
        if let observation { NotificationCenter.default.removeObserver(observation) }
    }

    /// Creates a store over `UserDefaults.standard` that saves writes as `saving` says.
    ///
    /// On Linux, a property-list file that does not parse is first copied aside and reported, because
    /// corelibs `UserDefaults` would read it as empty and overwrite it.
    public convenience init(saving: Saving = .coalesced) {
        #if !canImport(Darwin)
            Self.preserveCorruptFile(domain: ProcessInfo.processInfo.processName)
        #endif
        self.init(.standard, saving: saving)
    }

    /// Creates a store over the defaults suite named `suiteName` that saves writes as `saving` says, or
    /// returns `nil` if UserDefaults refuses the name.
    ///
    /// A refused name is reported as ``StorableConfigError/suiteUnavailable(suiteName:reason:)``, which names the
    /// suite. Apple's `UserDefaults` refuses `UserDefaults.globalDomain` and the app's own bundle identifier (use
    /// ``init(_:saving:)`` with `.standard` for the app's domain); they are refused on every platform, so that
    /// the mistake shows on Linux too. An app group's suite is named after the group: `"group.com.example.app"`.
    ///
    /// On Apple platforms, stores opened this way on one suite tell each other of their writes across processes
    /// (an app and its widget), with a Darwin notification rather than key-value observing, which cannot name
    /// keys that contain dots (Docs/Stores.md).
    ///
    /// On Linux, a property-list file that does not parse is first copied aside and reported, because
    /// corelibs `UserDefaults` would read it as empty and overwrite it.
    public convenience init?(suiteName: String, saving: Saving = .coalesced) {
        #if !canImport(Darwin)
            Self.preserveCorruptFile(domain: suiteName)
        #endif
        if let refusal = Self.refusal(ofSuiteName: suiteName) {
            StorableConfig.report(.suiteUnavailable(suiteName: suiteName, reason: refusal))
            return nil
        }
        guard let defaults = Self.defaults(suiteName: suiteName) else {
            StorableConfig.report(
                .suiteUnavailable(suiteName: suiteName, reason: "UserDefaults(suiteName:) returned nil for it"))
            return nil
        }
        self.init(defaults, saving: saving)
    }

    /// Why Apple's `UserDefaults(suiteName:)` refuses `name`, if it does: its documentation names the global
    /// domain and the app's own bundle identifier.
    static func refusal(ofSuiteName name: String) -> String? {
        if name == UserDefaults.globalDomain {
            return "the global domain is not writable by apps"
        }
        if let identifier = Bundle.main.bundleIdentifier, name == identifier {
            return "it is the app's own bundle identifier, whose domain UserDefaults.standard holds; use "
                + "UserDefaultsStore(.standard)"
        }
        return nil
    }

    /// One `UserDefaults` object per suite in the process, so that stores opened for one suite share their
    /// storage identity, and configs over them see each other's writes at once.
    private static let suites = Locked<[String: UserDefaults]>([:])

    /// The name of the suite that `defaults` was opened for with ``init(suiteName:saving:)``, if it was.
    private static func suiteName(of defaults: UserDefaults) -> String? {
        suites.withLock { suites in suites.first { $0.value === defaults }?.key }
    }

    private static func defaults(suiteName: String) -> UserDefaults? {
        suites.withLock { suites in
            if let existing = suites[suiteName] { return existing }
            guard let made = UserDefaults(suiteName: suiteName) else { return nil }
            suites[suiteName] = made
            return made
        }
    }

    /// Where corelibs `UserDefaults` keeps a domain: `$XDG_CONFIG_HOME/<domain>.plist`, else
    /// `$HOME/.config/<domain>.plist`.
    static func propertyListURL(domain: String) -> URL {
        FileSystem.userConfigDirectory().appendingPathComponent("\(domain).plist")
    }

    /// The corrupt files already copied, with the bytes copied, so that opening many stores makes one copy.
    private static let preservedFiles = Locked<[String: Data]>([:])

    /// Copies a domain's property-list file aside, and reports it, if it exists and does not parse.
    static func preserveCorruptFile(domain: String) {
        let path = propertyListURL(domain: domain).path
        guard let data = try? FileSystem.contents(ofPath: path), !data.isEmpty else { return }
        if preservedFiles.withLock({ $0[path] == data }) { return }
        guard (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) == nil else { return }
        let copy = FileSystem.unusedSiblingPath(for: path, suffix: "corrupt")
        do {
            try FileSystem.replaceFile(at: FileSystem.Destination(path: copy), with: data, permissions: 0o600)
            preservedFiles.withLock { $0[path] = data }
            StorableConfig.report(
                .corruptFileQuarantined(path: path, movedTo: copy, reason: "it is not a property list"))
        } catch {
            StorableConfig.report(
                .fileUnusable(path: path, reason: "it does not parse, and saving a copy failed: \(error)"))
        }
    }

    /// Returns the value stored for `key`.
    ///
    /// A value that `UserDefaults` holds only in its registration domain (`register(defaults:)`) or argument
    /// domain (a `-key value` launch argument) is not stored, and reads as `nil`, for `.standard` and for
    /// suites opened with ``init(suiteName:saving:)``; for another `UserDefaults` object, whose domain name is
    /// not known, such a value reads as stored.
    public func value(forKey key: String) -> StoredValue? {
        values(forKeys: [key])[key]
    }

    /// Returns the values stored for `keys`, as ``value(forKey:)`` reads them.
    public func values(forKeys keys: [String]) -> [String: StoredValue] {
        let result = storedValues(forKeys: keys)
        // Compared after a `didChangeNotification`.
        known.withLock { known in
            for key in keys { known[key] = .some(result[key]) }
        }
        return result
    }

    /// The values stored for `keys`, as ``value(forKey:)`` reads them, without noting them as known.
    func storedValues(forKeys keys: [String]) -> [String: StoredValue] {
        // One copy of the domain: corelibs lists no registered key in `volatileDomain(forName:)`, so only the
        // persistent domain tells a stored value from a registered one.
        let domain = domainName.map { defaults.persistentDomain(forName: $0) ?? [:] }
        return keys.reduce(into: [:]) { result, key in
            let object = domain == nil ? defaults.object(forKey: key) : domain?[key]
            if let stored = object.flatMap(Self.storedValue(from:)) { result[key] = stored }
        }
    }

    /// Stores `value` for `key`.
    /// - Throws: ``StorableConfigError/writeFailed(key:reason:)`` if the value could not be saved.
    public func setValue(_ value: StoredValue, forKey key: String) throws {
        try setValues([key: value], removingValuesForKeys: [])
    }

    /// Removes the value stored for `key`.
    /// - Throws: ``StorableConfigError/writeFailed(key:reason:)`` if the removal could not be saved.
    public func removeValue(forKey key: String) throws {
        try setValues([:], removingValuesForKeys: [key])
    }

    /// Stores `values` and removes `keysToRemove`, then saves once.
    ///
    /// `UserDefaults` has no transaction: another process can read the file between two of these changes,
    /// and ``updateValues(forKeys:_:)`` is not atomic: the framework runs record changes one at a time in this
    /// process (see Docs/Stores.md).
    /// - Throws: ``StorableConfigError/writeFailed(key:reason:)`` if the changes could not be saved.
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        // Checked before anything is written, so that a refused value leaves the others unwritten too.
        if valueSizeLimit != nil {
            for key in values.keys.sorted() { try checkSize(of: values[key]!, forKey: key) }
        }
        let stored = values.mapValues(Self.propertyListValue(from:))
        // Noted first: UserDefaults posts didChangeNotification from inside `set`, and these writes are no news.
        known.withLock { known in
            for (key, value) in stored { known[key] = .some(Self.storedValue(from: value)) }
            for key in keysToRemove { known[key] = .some(nil) }
        }
        for (key, value) in stored { defaults.set(value, forKey: key) }
        for key in keysToRemove { defaults.removeObject(forKey: key) }
        if let key = (Array(values.keys) + keysToRemove).min() { try persist(key: key) }
    }

    /// Saves what was written and re-reads the defaults database, so that other processes' writes become
    /// visible.
    public func reload() {
        defaults.synchronize()
    }

    /// The `UserDefaults` object: stores over the same object share changes at once.
    public var storageIdentity: AnyObject { defaults }

    /// "UserDefaults".
    public var description: String {
        defaults === UserDefaults.standard ? "UserDefaults.standard" : "UserDefaults"
    }
}

extension UserDefaultsStore: CustomReflectable {
    /// What the store is, without its values: `dump` of a config shows no stored value, secret or not.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description])
    }
}
