import Foundation

/// A store that keeps the values of secret settings (`@Setting(secret: true)`) apart from the others: the
/// `SecretRoutingStore` of the `StorableConfigSecrets` library, which sends them to a secret store. A config over a
/// store that wraps one (``WrappingConfigStore``, such as a synced store over it) tells the first such store down
/// the wrappers, so that the secrets of the configs created over the outer store stay apart too.
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
    /// ``UserDefaultsStore``, which keep them in plain form, itself or wrapped by stores none of which keeps
    /// secrets, each secret key is reported once for the storage: earlier versions of those stores kept them apart.
    func keepSecretsApart() {
        guard !schema.secretKeys.isEmpty else { return }
        let chain = store.storeChain
        guard let store = chain.lazy.compactMap({ $0 as? any SecretKeepingStore }).first else {
            let plain = chain.last ?? store
            guard plain is JSONFileStore || plain is UserDefaultsStore else { return }
            for key in schema.secretKeys where context.hub.isFirstReport(of: "secret\u{0}" + key) {
                StorableConfig.report(.secretKeptInPlainForm(key: key, store: "\(plain)"))
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
