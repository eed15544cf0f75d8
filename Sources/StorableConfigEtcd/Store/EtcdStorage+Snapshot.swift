import Foundation
import StorableConfig

/// The store's last-known-good snapshot (``EtcdSnapshot``): found and checked at start, the cache filled from it
/// when no member answers, and its contents for the writer.
@available(watchOS, unavailable)
extension EtcdStorage {
    /// The snapshot at `url`, if there is one that this store may start from; one that cannot be read or trusted,
    /// or that is of another prefix or other endpoints, is set aside and reported. One that its group may write is
    /// used and reported.
    func usableSnapshot(at url: URL) -> EtcdSnapshot? {
        let outcome = "the store starts as it does without one"
        do {
            var notices: [String] = []
            let found = try EtcdSnapshot.read(from: url, notices: &notices)
            for notice in notices { StorableConfig.report(.reloadFailed(store: description, reason: notice)) }
            guard let snapshot = found else { return nil }
            if let mismatch = snapshot.mismatch(endpoints: client.endpoints, prefix: prefix) {
                EtcdSnapshot.setAside(url, because: mismatch, store: description, outcome: outcome)
                return nil
            }
            return snapshot
        } catch {
            EtcdSnapshot.setAside(url, because: "\(error)", store: description, outcome: outcome)
            return nil
        }
    }

    /// Sets aside a snapshot found at start that the first read of the prefix shows to be of another cluster.
    func setAsideSnapshot(ofCluster other: String, not clusterID: String) {
        guard let url = snapshotWriter?.url else { return }
        EtcdSnapshot.setAside(
            url,
            because: "it is of the cluster \(other), and \(client.endpointList) answer as the cluster \(clusterID)",
            store: description, outcome: "the values read from the cluster replace any that the store took from it")
    }

    /// Fills the cache from `snapshot`, as of no revision, so that the first read of the prefix replaces it
    /// whole, and reports, once, that the store starts from it.
    func seed(from snapshot: EtcdSnapshot, outage: any Error) {
        lock.withLock {
            for (key, text) in snapshot.values { cache[key] = (.text(text), 0) }
            seededFrom = (snapshot.revision, snapshot.written)
        }
        StorableConfig.report(
            .reloadFailed(
                store: description,
                reason: "no member answered (\(outage)); the store starts from its snapshot "
                    + "\(snapshotWriter?.url.path ?? ""), written \(EtcdSnapshot.timestamp(snapshot.written)) at "
                    + "revision \(snapshot.revision): configs read those values, and assignments fail, until the "
                    + "cluster answers"))
    }

    /// The snapshot of the cache now; `nil` until the store has read the cluster (a snapshot is never written
    /// from a snapshot) or if the cluster gave no id.
    func snapshotContents() -> EtcdSnapshot? {
        let (cache, revision, clusterID) = lock.withLock { (self.cache, self.revision, self.clusterID) }
        guard revision > 0, !clusterID.isEmpty else { return nil }
        var values: [String: String] = [:]
        for (key, entry) in cache {
            // A value that is not text cannot be read from the snapshot either: left out, as a missing key.
            if case .text(let text) = entry.value { values[key] = text }
        }
        return EtcdSnapshot(
            endpoints: client.endpoints, prefix: prefix, clusterID: clusterID, revision: revision, written: Date(),
            values: values)
    }

    /// Where the values come from.
    var provenance: EtcdStore.Provenance {
        lock.withLock {
            if revision > 0 { return .cluster(revision: revision) }
            if let seededFrom { return .snapshot(revision: seededFrom.revision, written: seededFrom.written) }
            return .none
        }
    }
}
