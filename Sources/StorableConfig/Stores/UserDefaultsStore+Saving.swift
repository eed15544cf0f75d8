import Foundation

/// How a `UserDefaultsStore` keeps within the platform's size limit for one value, and saves what it wrote.
extension UserDefaultsStore {
    // MARK: Size limit

    /// The largest value, in bytes of its property-list form, that `UserDefaults` keeps on this platform, or
    /// `nil` where it sets none (macOS, Linux).
    ///
    /// tvOS warns when an app's defaults reach 512 KB and terminates the app at 1 MB, so one value may not
    /// reach 512 KB there; iOS, watchOS and visionOS log that storing 4 MiB (4,194,304 bytes) or more is
    /// invalid. The limit is checked for each value; keeping the whole database under tvOS's 1 MB is the app's
    /// part.
    static var platformValueSizeLimit: Int? {
        #if os(tvOS)
            return 512 * 1024
        #elseif os(iOS) || os(watchOS) || os(visionOS)
            return 4 * 1024 * 1024
        #else
            return nil
        #endif
    }

    /// The size of `value`'s property-list form, in bytes, near enough to compare with a limit of kilobytes:
    /// the text and data it holds, its keys, and a few bytes for everything else.
    static func estimatedSize(of value: StoredValue) -> Int {
        switch value {
        case .string(let text), .number(let text): text.utf8.count
        case .data(let bytes): bytes.count
        case .array(let items): items.reduce(8) { $0 + estimatedSize(of: $1) }
        case .dictionary(let members): members.reduce(8) { $0 + $1.key.utf8.count + estimatedSize(of: $1.value) }
        case .null: nullMarker.utf8.count
        default: 8
        }
    }

    func checkSize(of value: StoredValue, forKey key: String) throws {
        guard let limit = valueSizeLimit else { return }
        let size = Self.estimatedSize(of: value)
        guard size >= limit else { return }
        throw StorableConfigError.writeFailed(
            key: key,
            reason: "the value takes about \(size) bytes, and UserDefaults keeps none of \(limit) bytes or more on "
                + "this platform; it was not handed to UserDefaults")
    }

    func persist(key: String) throws {
        #if !canImport(Darwin)
            switch saving {
            case .onEveryWrite:
                guard defaults.synchronize() else { throw Self.saveFailure(key: key) }
            case .coalesced:
                Self.scheduleSave(of: defaults, lastKey: key)
            }
        #else
            // UserDefaults saves by itself there; the other processes on the suite are told to read again.
            suiteNotice?.post()
        #endif
    }

    private static func saveFailure(key: String) -> StorableConfigError {
        .writeFailed(key: key, reason: "UserDefaults could not save its property-list file under ~/.config")
    }

    // MARK: Coalesced saving

    /// Defaults written through a coalescing store and not saved yet, with the last key written to each.
    private static let unsaved = Locked<[ObjectIdentifier: (defaults: UserDefaults, lastKey: String)]>([:])
    private static let saveQueue = DispatchQueue(label: "StorableConfig.UserDefaultsStore.save")

    /// Registered once: saves everything unsaved when the process exits normally.
    private static let exitHook: Void = {
        atexit { UserDefaultsStore.saveUnsaved() }
    }()

    private static func scheduleSave(of defaults: UserDefaults, lastKey: String) {
        _ = exitHook
        let isFirst = unsaved.withLock { unsaved in
            let isFirst = unsaved.isEmpty
            unsaved[ObjectIdentifier(defaults)] = (defaults, lastKey)
            return isFirst
        }
        if isFirst {
            saveQueue.asyncAfter(deadline: .now() + 0.25) { saveUnsaved() }
        }
    }

    /// Saves every defaults database written and not saved yet.
    static func saveUnsaved() {
        let pending = unsaved.withLock { unsaved in
            defer { unsaved = [:] }
            return Array(unsaved.values)
        }
        for (defaults, lastKey) in pending where !defaults.synchronize() {
            StorableConfig.report(saveFailure(key: lastKey))
        }
    }
}
