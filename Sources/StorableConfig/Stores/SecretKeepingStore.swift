import Foundation

/// A store that keeps the values of secret settings (`@Setting(secret: true)`) apart from the others: the
/// `SecretRoutingStore` of the `StorableConfigSecrets` library, which sends them to a secret store. A store that
/// wraps one passes the call on, so that the secrets of the configs created over it stay apart too.
public protocol SecretKeepingStore: ConfigStore {
    /// Sends every later call for `keys` to the secret store, after moving the values stored for them in plain
    /// form there (once: a value moved by another process, or by an earlier config, is not moved again).
    /// Returns the problems to report: a value that cannot be moved (the secret store cannot be used now) stays
    /// where it is, its key is not sent to the secret store, and the next config created over the store tries
    /// again.
    func keepSecrets(forKeys keys: [String]) -> [StorableConfigError]
}

extension StorableConfig {
    /// Has the store keep the values of the config's secret settings in its secret store, moving those stored in
    /// plain form there: in the initializer, before the values are read. Over a ``JSONFileStore`` or a
    /// ``UserDefaultsStore`` of its own, which keep them in plain form, each secret key is reported once: earlier
    /// versions kept them apart.
    func keepSecretsApart() {
        guard !schema.secretKeys.isEmpty else { return }
        guard let store = store as? any SecretKeepingStore else {
            guard store is JSONFileStore || store is UserDefaultsStore else { return }
            for key in schema.secretKeys where context.hub.isFirstReport(of: "secret\u{0}" + key) {
                StorableConfig.report(.secretKeptInPlainForm(key: key, store: "\(store)"))
            }
            return
        }
        // The keys as they are (an earlier key is read where it is, though the hub sends writes of it to the
        // current key), and where the hub sends them.
        var keys = schema.secretKeys
        for key in schema.secretKeys.map(context.hub.storeKey) where !keys.contains(key) { keys.append(key) }
        for problem in store.keepSecrets(forKeys: keys) { StorableConfig.report(problem) }
    }
}
