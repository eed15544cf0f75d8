import Foundation
import StorableConfig

/// The storages of the process, one for each cluster, prefix, user, TLS set-up and snapshot: stores for the same
/// share one client, cache and watch.
@available(watchOS, unavailable)
extension EtcdStorage {
    struct Weak {
        weak var storage: EtcdStorage?
    }

    static let shared = Locked<[String: Weak]>([:])

    /// The storage for `endpoints`, `prefix` and the credentials, made if no store in the process uses it.
    /// A store with a snapshot has a storage of its own, which no store without one, or with another file,
    /// shares: two storages writing one file would each replace the other's, and a store created without a
    /// snapshot would otherwise get one, or not, by whichever store came first.
    static func storage(
        endpoints: [URL], prefix: String, credentials: EtcdStore.Credentials?, tls: EtcdStore.TLS?,
        timeout: TimeInterval, watchIdleLimit: TimeInterval, snapshot: URL? = nil
    ) throws -> EtcdStorage {
        let name =
            endpoints.map(\.absoluteString).sorted().joined(separator: ",") + "|" + prefix + "|"
            + (credentials.map { "\($0.user)|\($0.password.hashValue)" } ?? "") + "|"
            + (tls.map { [$0.caFile, $0.certificateFile, $0.keyFile].map { $0?.path ?? "-" }.joined(separator: "|") }
                ?? "") + "|" + (snapshot?.standardizedFileURL.path ?? "")
        if let existing = shared.withLock({ $0[name]?.storage }) { return existing }
        let made = try EtcdStorage(
            endpoints: endpoints, prefix: prefix, credentials: credentials, tls: tls, timeout: timeout,
            watchIdleLimit: watchIdleLimit, snapshot: snapshot)
        return shared.withLock { storages in
            if let existing = storages[name]?.storage {
                made.watcherObject?.stop()
                return existing
            }
            storages[name] = Weak(storage: made)
            return made
        }
    }
}
