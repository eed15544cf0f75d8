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
        timeout: TimeInterval, watchIdleLimit: TimeInterval, watchLagLimit: TimeInterval, snapshot: URL? = nil
    ) throws -> EtcdStorage {
        let name =
            endpoints.map(\.absoluteString).sorted().joined(separator: ",") + "|" + prefix + "|"
            + (credentials.map { "\($0.user)|\($0.password.hashValue)" } ?? "") + "|"
            + (tls.map(Self.sharingKey) ?? "") + "|" + (snapshot?.standardizedFileURL.path ?? "")
        if let existing = shared.withLock({ $0[name]?.storage }) { return existing }
        let made = try EtcdStorage(
            endpoints: endpoints, prefix: prefix, credentials: credentials, tls: tls, timeout: timeout,
            watchIdleLimit: watchIdleLimit, watchLagLimit: watchLagLimit, snapshot: snapshot)
        return shared.withLock { storages in
            if let existing = storages[name]?.storage {
                made.watcherObject?.stop()
                return existing
            }
            storages[name] = Weak(storage: made)
            return made
        }
    }

    /// What tells one TLS set-up from another for sharing: every file, and the PKCS#12 password (as its hash, as
    /// for credentials), so that a store with another client certificate, or a wrong password, is never handed a
    /// storage made with a good one.
    private static func sharingKey(_ tls: EtcdStore.TLS) -> String {
        [tls.caFile, tls.certificateFile, tls.keyFile, tls.pkcs12File].map { $0?.path ?? "-" }.joined(separator: "|")
            + "|\(tls.pkcs12Password.hashValue)"
    }
}
