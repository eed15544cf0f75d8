import Foundation

/// A read-only source of setting values that you write: a remote feature-flag service, a vault, a test's fixed
/// values. Give it to ``ConfigSource/provider(_:secret:)`` and declare it in ``ConfigSources``, above the store
/// (it wins over stored values) or below it (it replaces the declared default):
///
/// ```swift
/// StorableConfig.defaultSources = ConfigSources(aboveStore: [.provider(flags)])
/// ```
///
/// The library asks for ``currentValues()`` when a config first reads the provider, and again each time the
/// provider says that its values changed (the `onChange` it was given in ``startWatching(_:)``) or
/// ``StorableConfig/reloadSources()`` is called; one provider object is read once for every config that uses it.
/// Its values are then layers like those of a file source: a value of the wrong type, or one the setting's check
/// refuses, is reported by key and the setting keeps the last valid value the provider gave; a dictionary that gives
/// some fields of a struct takes the others from the layers below; `layer` is ``SettingLayer/provider`` and `origin`
/// names the provider. See "Writing a provider" in Docs/WritingAStore.md.
///
/// It is compared by identity: two sources made from one object (with the same `secret`) are one source.
///
/// When the provider calls `onChange`, the library calls ``currentValues()`` on that thread before `onChange`
/// returns, holding none of its own locks around either: call `onChange` without holding a lock of the provider's
/// that `currentValues()` takes. The closure that `startWatching(_:)` returns may run on any thread, from inside
/// `onChange` too (the last config released there): it must not wait for `onChange` to return.
public protocol ConfigProvider: AnyObject, Sendable {
    /// How reports and ``AnySetting/origin`` name the provider: `feature flags (flags.example.com)`.
    var providerName: String { get }

    /// The values the provider gives now, each named by a setting's key (`com.example.app.AppConfig.darkMode`) or
    /// by its config's name and property (`AppConfig.darkMode`); a name that two live settings answer to is applied
    /// to neither and reported, and ``StorableConfig/checkOverrides(of:)`` reports a name that no setting answers
    /// to. Called on whichever thread asked, without any lock of the library held, and only one at a time is
    /// installed: a reading begun before another that was installed is dropped. Keep it quick (return what the
    /// provider last fetched, and fetch elsewhere).
    ///
    /// - Throws: When the values cannot be had: reported (naming ``providerName`` and the error), and the values
    ///   it gave before are kept until it can be read again.
    func currentValues() throws -> [String: StoredValue]

    /// Starts calling `onChange` whenever the values may have changed, from any thread, and returns what stops
    /// that; called when the first config reads the provider, stopped when the last one is gone. When `onChange`
    /// returns, the configs that read the provider read what ``currentValues()`` then gives. It may be called
    /// from inside `startWatching` and from an observer of a setting; never from inside ``currentValues()``, which
    /// it calls. The default calls nothing: the values are read again only at ``StorableConfig/reloadSources()``.
    func startWatching(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void
}

extension ConfigProvider {
    /// Calls nothing, and returns a stop that does nothing.
    public func startWatching(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void { {} }
}

extension ConfigSource {
    /// A source whose values `provider` gives (see ``ConfigProvider``).
    ///
    /// - Parameters:
    ///   - provider: The provider: read once for every config that uses it, and compared by identity.
    ///   - secret: Whether every value it gives is secret: never shown in reports, descriptions or listings.
    public static func provider(_ provider: some ConfigProvider, secret: Bool = false) -> ConfigSource {
        ConfigSource(provider: ProviderReference(provider), secret: secret)
    }
}

/// A ``ConfigProvider`` that a ``ConfigSource`` names, compared by identity.
struct ProviderReference: Hashable, Sendable {
    let provider: any ConfigProvider

    init(_ provider: any ConfigProvider) {
        self.provider = provider
    }

    static func == (lhs: ProviderReference, rhs: ProviderReference) -> Bool { lhs.provider === rhs.provider }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(provider)) }
}

extension SourceContents {
    /// Asks `provider` for its values now: each by its name. Never throws: an error is a problem, and the values
    /// of `old`, the last reading, are kept.
    static func readProvider(_ provider: any ConfigProvider, keepingFrom old: SourceContents?) -> SourceContents {
        let values: [String: StoredValue]
        do {
            values = try provider.currentValues()
        } catch {
            var kept = old ?? SourceContents()
            kept.problems = [
                .sourceUnusable(
                    where: provider.providerName,
                    reason: "its values could not be had (\(error)); the values it gave before are kept until they "
                        + "can")
            ]
            return kept
        }
        var contents = SourceContents()
        contents.exists = true
        for (name, value) in values {
            // A value no store could hold (see `StoredValue.maximumDepth`) is not read: nothing recurses into it.
            guard !value.nests(deeperThan: StoredValue.maximumDepth) else {
                contents.problems.append(
                    .sourceUnusable(
                        where: provider.providerName,
                        reason: "its value \(name) nests more than \(StoredValue.maximumDepth) arrays and "
                            + "dictionaries; it is not read"))
                continue
            }
            let origin = "\(provider.providerName) key \(name)"
            contents.entries[name] = Entry(value: .stored(value), origin: origin, file: name)
            contents.fingerprint[name] = Data("\(value.kindDescription)\n\(value.jsonText())".utf8)
        }
        return contents
    }
}
