import Foundation
import StorableConfig

/// The keys of one storage's secret settings, and the secret store that keeps their values: a
/// ``SecretRoutingStore`` sends every call for such a key here instead of to the store it wraps, so that its
/// `UserDefaults` or its file never hold a secret.
///
/// A key becomes secret when a config whose setting is declared secret is created over the store
/// (``SecretKeepingStore/keepSecrets(forKeys:)``), before the config reads its values, and stays secret for the
/// store's life.
final class SecretRouter: Sendable {
    let secrets: any SecretStore

    private struct State {
        /// The secret keys.
        var keys: Set<String> = []
        /// What the secret store held for each secret key when last read or written (`.some(nil)`: nothing). A
        /// key missing here is read on its next read: the secret store could not be read for it yet.
        var known: [String: StoredValue?] = [:]
        /// The keys whose failed reading was reported, until a reading succeeds.
        var reported: Set<String> = []
        /// Counts the writes begun: a reading begun before a write ended does not replace what the write noted.
        var writes: UInt64 = 0
        /// By key, the number of the last write that noted its value.
        var noted: [String: UInt64] = [:]
        /// By key, the writes under way.
        var inFlight: [String: Int] = [:]
        /// The keys written by writes that overlapped: the secret store may have applied them in either order, so
        /// the key is read from it again once they end.
        var overlapped: Set<String> = []
    }

    private let state = Locked(State())

    private init(_ secrets: any SecretStore) {
        self.secrets = secrets
    }

    /// A router held weakly, by the storage and the secret store it joins.
    private struct Entry {
        weak var router: SecretRouter?
    }

    private static let routers = Locked<[String: Entry]>([:])

    /// The router between `storage` (a store's storage identity) and `secrets`: one per pair in the process, so
    /// that every store over one storage notes the same secret values. Held by the stores; a router no store holds
    /// goes away.
    static func shared(storage: AnyObject, secrets: any SecretStore) -> SecretRouter {
        // Two file stores on one directory are one place: they share a router, and so what it notes.
        let directory = (secrets as? FileSecretStore)?.directory.path ?? (secrets as? DeferredFileSecretStore)?.path
        let place = directory.map { ($0 as NSString).resolvingSymlinksInPath } ?? Self.text(of: secrets)
        let key = Self.text(of: storage) + " " + place
        return routers.withLock { routers in
            if let router = routers[key]?.router { return router }
            let router = SecretRouter(secrets)
            routers = routers.filter { $0.value.router != nil }
            routers[key] = Entry(router: router)
            return router
        }
    }

    /// The identity of `object` as text.
    private static func text(of object: AnyObject) -> String {
        String(UInt(bitPattern: ObjectIdentifier(object)), radix: 16)
    }

    /// Those of `keys` that are not secret yet.
    func notSecret(_ keys: [String]) -> [String] {
        state.withLock { state in keys.filter { !state.keys.contains($0) } }
    }

    /// Makes `keys` secret: every later call for them goes to the secret store.
    func add(_ keys: [String]) {
        state.withLock { state in state.keys.formUnion(keys) }
    }

    /// `keys` split into those the store keeps itself and the secret ones.
    func split(_ keys: [String]) -> (plain: [String], secret: [String]) {
        let secret = state.withLock { state in keys.filter(state.keys.contains) }
        guard !secret.isEmpty else { return (keys, []) }
        return (keys.filter { !secret.contains($0) }, secret)
    }

    /// The secret values of `keys` (all secret), as last read or written; a key not read yet is read now, and a
    /// failure to read it is reported (once, until a reading succeeds) and reads as no value.
    func values(forKeys keys: [String]) -> [String: StoredValue] {
        var result: [String: StoredValue] = [:]
        let missing = state.withLock { state in
            keys.filter { key in
                guard let known = state.known[key] else { return true }
                if let known { result[key] = known }
                return false
            }
        }
        for key in missing {
            if let value = read(key) { result[key] = value }
        }
        return result
    }

    /// Reads `key` from the secret store and notes it; `nil` when there is nothing, or it cannot be read (then
    /// reported).
    private func read(_ key: String) -> StoredValue? {
        let begun = state.withLock { $0.writes }
        do {
            let value = try secrets.secret(forKey: key).map(Self.decode)
            state.withLock { state in
                if state.known[key] == nil, (state.noted[key] ?? 0) <= begun, (state.inFlight[key] ?? 0) == 0 {
                    state.known[key] = .some(value)
                }
                state.reported.remove(key)
            }
            return value
        } catch {
            let first = state.withLock { $0.reported.insert(key).inserted }
            if first { StorableConfig.report(.readFailed(key: key, reason: Self.reason(error))) }
            return nil
        }
    }

    /// Reads every secret key again; returns those whose values changed.
    /// - Throws: ``StorableConfigError/reloadFailed(store:reason:)`` when one cannot be read: the others are read
    ///   all the same, and that one keeps its value.
    func reload() throws -> Set<String> {
        let keys = state.withLock { Array($0.keys) }
        var changed: Set<String> = []
        var failure: (any Error)?
        for key in keys.sorted() {
            let begun = state.withLock { $0.writes }
            do {
                let value = try secrets.secret(forKey: key).map(Self.decode)
                state.withLock { state in
                    // A write that ended while the key was read noted a newer value.
                    guard (state.noted[key] ?? 0) <= begun, (state.inFlight[key] ?? 0) == 0 else { return }
                    if let known = state.known[key], known == value { return }
                    state.known[key] = .some(value)
                    changed.insert(key)
                }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure {
            throw StorableConfigError.reloadFailed(store: secrets.description, reason: Self.reason(failure))
        }
        return changed
    }

    /// Writes `value` (`nil`: removes it) to the secret store.
    /// - Throws: `WriteNotKept`, a ``StorableConfigError/writeFailed(key:reason:)`` naming the key that no config
    ///   believes: the setting keeps its last good value, whatever the wrapped store keeps of other failed writes.
    func setValue(_ value: StoredValue?, forKey key: String) throws {
        do {
            try write(value, forKey: key)
        } catch {
            throw WriteNotKept(.writeFailed(key: key, reason: Self.reason(error)))
        }
    }

    /// Writes `value` (`nil`: removes it) to the secret store and notes it. No lock is held while the secret store
    /// runs. Writes of one key that overlap leave it to be read from the secret store again, which applied them in
    /// an order no one knows (the hub reads the key again after overlapping writes, and finds it there).
    /// - Throws: What the secret store throws.
    func write(_ value: StoredValue?, forKey key: String) throws {
        let number = state.withLock { state -> UInt64 in
            state.writes += 1
            if state.inFlight[key, default: 0] > 0 { state.overlapped.insert(key) }
            state.inFlight[key, default: 0] += 1
            return state.writes
        }
        var failure: (any Error)?
        do {
            if let value {
                try secrets.setSecret(Self.encode(value), forKey: key)
            } else {
                try secrets.removeSecret(forKey: key)
            }
        } catch {
            failure = error
        }
        state.withLock { state in
            state.inFlight[key, default: 1] -= 1
            if failure == nil, (state.noted[key] ?? 0) < number {
                state.noted[key] = number
                state.known[key] = .some(value)
            }
            if state.overlapped.contains(key) {
                state.known[key] = nil
                if state.inFlight[key] == 0 { state.overlapped.remove(key) }
            }
        }
        if let failure { throw failure }
    }

    /// Writes `values` and removes `keysToRemove`: the secret ones in the secret store, the others with
    /// `plainWrite`, first.
    func applySecretChanges(
        _ values: [String: StoredValue], removing keysToRemove: [String],
        plainWrite: ([String: StoredValue], [String]) throws -> Void
    ) throws {
        let secretKeys = split(Array(values.keys) + keysToRemove).secret
        guard !secretKeys.isEmpty else { return try plainWrite(values, keysToRemove) }
        let plain = values.filter { !secretKeys.contains($0.key) }
        let plainRemovals = keysToRemove.filter { !secretKeys.contains($0) }
        // The plain values first: when a secret then fails, the hub reads every key of the call again, and finds
        // the plain ones written and the secret ones as they were. When the plain ones fail, the secret ones are
        // not written: no config may believe them, whatever the wrapped store keeps of its failed writes.
        if !plain.isEmpty || !plainRemovals.isEmpty {
            do {
                try plainWrite(plain, plainRemovals)
            } catch {
                let key = (Array(plain.keys) + plainRemovals).min() ?? ""
                throw WriteNotKept(error as? StorableConfigError ?? .writeFailed(key: key, reason: Self.reason(error)))
            }
        }
        for key in secretKeys.sorted() { try setValue(values[key], forKey: key) }
    }

    /// `updateValues(forKeys:_:)` for a store with secrets: runs `transform` over the plain values that
    /// `plainUpdate` passes in and the secret values, and writes back to the secret store the secret values it
    /// changed. The plain part is as atomic as the store makes it; the secret part is not.
    func update(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void,
        plainUpdate: ([String], (inout [String: StoredValue]) throws -> Void) throws -> [String: StoredValue]
    ) throws -> [String: StoredValue] {
        let (plainKeys, secretKeys) = split(keys)
        guard !secretKeys.isEmpty else {
            return try withoutActuallyEscaping(transform) { try plainUpdate(keys, $0) }
        }
        let before = values(forKeys: secretKeys)
        var after = before
        func transformAll(_ plain: inout [String: StoredValue]) throws {
            var all = plain.merging(before) { current, _ in current }
            try transform(&all)
            plain = all.filter { !secretKeys.contains($0.key) }
            after = all.filter { secretKeys.contains($0.key) }
        }
        var plainResult: [String: StoredValue] = [:]
        if plainKeys.isEmpty {
            // No plain key: the store's own update may not run the transform at all.
            try transformAll(&plainResult)
        } else {
            plainResult = try withoutActuallyEscaping(transformAll) { try plainUpdate(plainKeys, $0) }
        }
        for key in secretKeys where after[key] != before[key] { try setValue(after[key], forKey: key) }
        return plainResult.merging(after) { current, _ in current }
    }

    /// A value as the secret store keeps it: its compact JSON text.
    static func encode(_ value: StoredValue) -> Data {
        Data(value.jsonText().utf8)
    }

    /// Bytes from the secret store as a value: JSON text as the value it spells, other text (a secret put there
    /// by hand) as a string, and bytes that are not UTF-8 as data.
    static func decode(_ data: Data) -> StoredValue {
        guard let text = String(data: data, encoding: .utf8) else { return .data(data) }
        return (try? StoredValue(jsonText: text)) ?? .string(text)
    }

    static func reason(_ error: any Error) -> String {
        var text = Substring((error as? StorableConfigError)?.description ?? "\(error)")
        // A clause inside a sentence: without the final period of a sentence of its own, keeping an ellipsis.
        while text.last == " " || text.last == "\n" { text.removeLast() }
        return String(text.hasSuffix(".") && !text.hasSuffix("..") ? text.dropLast() : text)
    }
}
