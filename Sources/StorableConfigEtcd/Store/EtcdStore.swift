import Foundation
import StorableConfig

/// A store that keeps settings in an etcd cluster, so that one config class is shared by a fleet of servers,
/// with live updates.
///
/// ```swift
/// final class Limits: StorableConfig { @Setting var maxUploadMB = 50 }
/// let etcd = try EtcdStore(endpoints: [URL(string: "http://etcd-1.internal:2379")!], prefix: "prod/")
/// let limits = Limits(store: etcd)
/// // An operator runs `etcdctl put prod/<namespace>.Limits.maxUploadMB 80`, or another server assigns it:
/// // every server reads 80 within milliseconds, through `$maxUploadMB.changes`, `observe` and Observation.
/// ```
///
/// Each setting is one etcd key, the prefix followed by the setting's key byte for byte, whose value is the
/// setting's JSON text, so `etcdctl get` shows readable JSON and `etcdctl put` of JSON text works. It speaks
/// etcd's v3 JSON gateway over `http://` or `https://` (TLS with client certificates, ``TLS``), with a small
/// HTTP/1.1 client of its own that keeps its connections: on Linux, URLSession stops the process on etcd's error
/// answers. A password is never sent in clear text to another machine unless you say so.
///
/// - **Reads** come from a local cache, filled by one range read of the prefix and kept current by one watch
///   on the prefix that starts at that read's revision + 1, so no change between the two is missed.
/// - **An assignment blocks its caller until the cluster has committed it** (a millisecond or two on a
///   healthy cluster, seconds during an election): do not assign from a UI's main thread. A slow or failing
///   write never blocks reads or observers.
/// - **Read-modify-writes** (record collections, moves and migrations) are one transaction that compares
///   each key's `mod_revision` and retries on conflict: atomic across processes and machines. A batch is one
///   transaction too; one over etcd's 128 operations is refused, never split.
/// - **Size.** A write over the cluster's `--max-request-bytes` (1.5 MiB by default) is refused by etcd; the
///   error names the largest values and their sizes.
/// - **Failures**: each request tries the endpoints in turn. When no member answers, reads keep the last
///   known values and writes fail with an error naming the endpoints: the failure is reported and the setting
///   goes back to the value the cluster last gave (``keepsFailedWrites`` is `false`), and nothing is kept to be
///   written later. The watch resumes at the last seen revision + 1 on the next endpoint; after a compaction it
///   reads the prefix again and delivers the differences.
/// - **A last-known-good snapshot** (`snapshot:`, opt-in): a file that the store keeps up to date with the
///   values and their revision, and starts from when no member answers at start (``source`` says so).
/// - **A value that is not JSON text** (`etcdctl put key plain`) cannot be read: it is reported, the setting
///   keeps the value it had (its default, at start), and the value is left alone.
@available(watchOS, unavailable)
public final class EtcdStore: IdentifiedConfigStore, @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    /// A user and password for etcd's authentication; the token is renewed when it expires.
    public struct Credentials: Sendable {
        /// The user's name.
        public var user: String
        /// The user's password.
        public var password: String

        /// Credentials of `user`.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// What `https://` endpoints are checked against, and the client's certificate: the files etcdctl takes as
    /// `--cacert`, `--cert` and `--key`, in PEM.
    ///
    /// ```swift
    /// let tls = EtcdStore.TLS(
    ///     caFile: URL(fileURLWithPath: "/etc/etcd/ca.pem"),
    ///     certificateFile: URL(fileURLWithPath: "/etc/etcd/client.pem"),
    ///     keyFile: URL(fileURLWithPath: "/etc/etcd/client-key.pem"))
    /// let store = try EtcdStore(endpoints: [URL(string: "https://etcd-1.internal:2379")!], prefix: "prod/", tls: tls)
    /// ```
    ///
    /// A member's certificate must chain to a certificate of `caFile` (the system's roots when it is `nil`) and
    /// name the endpoint's host name or IP address; TLS 1.2 or later.
    ///
    /// The client certificate is given either as PEM files (`certificateFile` and `keyFile`, on Linux) or as one
    /// PKCS#12 file (`pkcs12File`, on every platform): Apple's systems cannot pair a PEM key with its certificate
    /// outside the keychain, so there a client certificate is PKCS#12. See Docs/Etcd.md, "TLS".
    public struct TLS: Sendable, Hashable, CustomStringConvertible {
        /// The CA certificates that members' certificates must chain to (etcdctl's `--cacert`); `nil` for the
        /// system's.
        public var caFile: URL?
        /// The client's certificate, with any intermediates after it (etcdctl's `--cert`), for a cluster started
        /// with `--client-cert-auth`.
        public var certificateFile: URL?
        /// The client certificate's private key, unencrypted (etcdctl's `--key`).
        public var keyFile: URL?
        /// The client's certificate, its key and any intermediates in one PKCS#12 file
        /// (`openssl pkcs12 -export -in client.pem -inkey client-key.pem -out client.p12`), instead of
        /// `certificateFile` and `keyFile`.
        public var pkcs12File: URL?
        /// The password of `pkcs12File`; empty for none. Never shown in ``description``.
        public var pkcs12Password: String

        /// TLS with these PEM files; all optional.
        public init(caFile: URL? = nil, certificateFile: URL? = nil, keyFile: URL? = nil) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.pkcs12File = nil
            self.pkcs12Password = ""
        }

        /// TLS with a client certificate from a PKCS#12 file, and members checked against `caFile` (the system's
        /// roots when it is `nil`).
        public init(caFile: URL? = nil, pkcs12File: URL, pkcs12Password: String = "") {
            self.caFile = caFile
            self.certificateFile = nil
            self.keyFile = nil
            self.pkcs12File = pkcs12File
            self.pkcs12Password = pkcs12Password
        }

        /// The files, without the password.
        public var description: String {
            let files: [(String, URL?)] = [
                ("caFile", caFile), ("certificateFile", certificateFile), ("keyFile", keyFile),
                ("pkcs12File", pkcs12File),
            ]
            let shown = files.compactMap { name, file in file.map { "\(name): \($0.path)" } }
            return "TLS(\(shown.joined(separator: ", ")))"
        }
    }

    /// The prefix of every key, as given.
    public let prefix: String
    /// The endpoints, in the order they are tried.
    public var endpoints: [URL] { storage.client.endpoints }
    let storage: EtcdStorage

    /// Where a store's values come from.
    public enum Provenance: Sendable, Equatable {
        /// The cluster: the values are complete up to `revision`, and the watch keeps them current.
        case cluster(revision: Int64)
        /// The snapshot file, written at `written` with the values at `revision`: no member has answered since the
        /// store was created.
        case snapshot(revision: Int64, written: Date)
        /// Nowhere yet: no member has answered and there was no usable snapshot; configs read their defaults.
        case none
    }

    /// Connects to the cluster at `endpoints` and reads every key under `prefix`; stores for the same
    /// endpoints, prefix, user and snapshot file in one process share one connection, cache and watch.
    ///
    /// Creating the store never hangs: the first read tries each endpoint once, for at most `timeout` each and
    /// three timeouts in all (15 s by default), however many endpoints there are. If no member answers, the
    /// store starts from the snapshot, if there is a usable one, or else empty (configs read their defaults),
    /// keeps trying in the background, and delivers the values as changes when the cluster answers;
    /// ``isConnected`` and ``source`` tell which.
    ///
    /// ```swift
    /// let etcd = try EtcdStore(
    ///     endpoints: [URL(string: "http://etcd-1.internal:2379")!], prefix: "prod/",
    ///     snapshot: URL(fileURLWithPath: "/var/lib/app/etcd-snapshot.json"))
    /// ```
    ///
    /// - Parameters:
    ///   - endpoints: The members' client URLs, `http://` or `https://`, tried in this order.
    ///   - prefix: What every key starts with.
    ///   - credentials: A user and password for etcd's authentication.
    ///   - tls: What `https://` endpoints are checked against, and the client certificate; the system's CAs and no
    ///     client certificate when `nil`.
    ///   - timeout: How long one request may take on one endpoint, all of it.
    ///   - watchLagLimit: How long the watch may go without a change of the prefix that another member has
    ///     committed before it leaves its member for the next (5 s by default): a frozen member (a stopped
    ///     process, a paused VM, a host whose packets are dropped) keeps the watch's connection open and sends
    ///     nothing. Another member is asked every half limit, while the watch has been quiet that long; a change
    ///     reaches the store within about this limit and a half of the freeze. See ``watchLagLimit``.
    ///   - snapshot: A file for a last-known-good copy of the values (mode 0600, in a directory made 0700 if
    ///     missing), written a quarter of a second after changes arrive; `nil` keeps none. A snapshot of other
    ///     endpoints, another prefix or another cluster, or one that cannot be read, is reported and renamed
    ///     beside it (`<name>.unused-<time>`; the three newest are kept), never used. See Docs/Etcd.md,
    ///     "Last-known-good snapshot".
    ///   - allowingPasswordOverPlainHTTP: Send `credentials` over `http://` to a host that is not this machine,
    ///     where anyone on the path can read the password. Refused unless this is `true`.
    /// - Throws: ``StorableConfig/StorableConfigError/reloadFailed(store:reason:)`` if `endpoints` is empty or
    ///   the cluster refuses the credentials.
    public convenience init(
        endpoints: [URL], prefix: String = "", credentials: Credentials? = nil, tls: TLS? = nil,
        timeout: TimeInterval = 5, watchLagLimit: TimeInterval = EtcdStore.defaultWatchLagLimit,
        snapshot: URL? = nil, allowingPasswordOverPlainHTTP: Bool = false
    ) throws {
        try self.init(
            endpoints: endpoints, prefix: prefix, credentials: credentials, tls: tls, timeout: timeout,
            allowingPasswordOverPlainHTTP: allowingPasswordOverPlainHTTP, watchIdleLimit: EtcdWatcher.idleLimit,
            watchLagLimit: watchLagLimit, snapshot: snapshot)
    }

    /// The same, with the watch's idle limit (15 minutes) shortened, for the tests.
    init(
        endpoints: [URL], prefix: String, credentials: Credentials?, tls: TLS? = nil, timeout: TimeInterval,
        allowingPasswordOverPlainHTTP: Bool = false, watchIdleLimit: TimeInterval,
        watchLagLimit: TimeInterval = EtcdStore.defaultWatchLagLimit, snapshot: URL? = nil
    ) throws {
        guard !endpoints.isEmpty else {
            throw StorableConfigError.reloadFailed(store: "etcd", reason: "no endpoint was given")
        }
        if let credentials, !allowingPasswordOverPlainHTTP,
            let exposed = endpoints.first(where: { $0.scheme == "http" && !Self.isThisMachine($0.host ?? "") })
        {
            throw StorableConfigError.reloadFailed(
                store: "etcd \(exposed.absoluteString)",
                reason: "the password of the user \(credentials.user) would go in clear text over http:// to "
                    + "\(exposed.host ?? ""), which is not this machine, where anyone on the path can read it; use "
                    + "https:// endpoints, or pass allowingPasswordOverPlainHTTP: true to send it all the same")
        }
        self.prefix = prefix
        storage = try EtcdStorage.storage(
            endpoints: endpoints, prefix: prefix, credentials: credentials, tls: tls, timeout: timeout,
            watchIdleLimit: watchIdleLimit, watchLagLimit: watchLagLimit, snapshot: snapshot)
    }

    /// How long the watch may go without a change of the prefix that another member has committed before it
    /// leaves its member for the next: 5 seconds. With it, a change committed by the majority reaches every
    /// process within 10 s of the watched member freezing.
    public static let defaultWatchLagLimit: TimeInterval = 5

    /// How long this store's watch may go without a change that another member has committed before it moves
    /// to the next member: the initializer's `watchLagLimit`, 5 s by default. Stores that
    /// share a watch (the same endpoints, prefix, user, TLS and snapshot) share the limit of the first.
    public var watchLagLimit: TimeInterval { storage.watchLagLimit }

    /// Whether `host` is this machine: `localhost`, an address of 127.0.0.0/8, or `::1`. Decided from the text
    /// alone: a name that the resolver might send here is not taken on trust.
    static func isThisMachine(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Whether the store has read the cluster at least once.
    public var isConnected: Bool { storage.isConnected }

    /// Where the values come from: the cluster (and the revision they are complete up to), the snapshot the store
    /// started from while no member answers, or nowhere yet.
    public var provenance: Provenance { storage.provenance }

    /// The earlier name of ``Provenance``.
    @available(*, deprecated, renamed: "Provenance")
    public typealias Source = Provenance

    /// The earlier name of ``provenance``.
    @available(*, deprecated, renamed: "provenance")
    public var source: Provenance { provenance }

    /// The snapshot file, if the store keeps one.
    public var snapshot: URL? { storage.snapshotWriter?.url }

    /// Why the store has not read the cluster yet, in words for a person: what each endpoint did (refused the
    /// connection, timed out, answered with something that is not etcd's answer). `nil` once it has read it.
    public var connectionProblem: String? { storage.connectionProblem }

    /// "etcd http://127.0.0.1:2379 prefix prod/".
    public var description: String { storage.description }

    /// What the store is, without its values or credentials: `dump` of a config shows neither.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// The connection it shares with the other stores for the same cluster, prefix and user.
    public var storageIdentity: AnyObject { storage }

    /// The cached value of `key`.
    /// - Throws: If the value in etcd is not JSON text.
    public func value(forKey key: String) throws -> StoredValue? { try storage.value(forKey: key) }

    /// Puts `value` under `key` and returns when the cluster has committed it.
    public func setValue(_ value: StoredValue, forKey key: String) throws { try storage.setValue(value, forKey: key) }

    /// Deletes `key` and returns when the cluster has committed it.
    public func removeValue(forKey key: String) throws { try storage.removeValue(forKey: key) }

    /// One transaction: every put and delete, or none.
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try storage.setValues(values, removingValuesForKeys: keysToRemove)
    }

    /// Reads `keys` and their revisions in one transaction, transforms them, and writes the result in a
    /// transaction that succeeds only if no key changed meanwhile; retries on conflict.
    @discardableResult
    public func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try storage.updateValues(forKeys: keys, transform)
    }

    /// ``StorableConfig/ConfigStoreAtomicity/acrossProcesses``: a transaction comparing revisions.
    public var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// `false`: an assignment that the cluster did not take is reported, and every config in this process goes
    /// back to the value the store holds (the cluster's last, or the snapshot's), because a value that one server
    /// believes and the others do not is worse than a failed write. Nothing is kept to be sent later, where it
    /// could overwrite what another server wrote meanwhile. (A write whose answer was lost may still have been
    /// committed: the watch then brings it, as a change.)
    public var keepsFailedWrites: Bool { false }

    /// Reads every key under the prefix again.
    public func reload() throws { try storage.reload() }
}
