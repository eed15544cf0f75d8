import Foundation

/// The secret stores that ``JSONFileStore`` and ``UserDefaultsStore`` keep secret settings in unless told
/// otherwise.
public enum SecretStores {
    /// The secret store for the settings file at `url`: for now none (secrets stay in the file).
    public static func besideFile(at url: URL) -> (any SecretStore)? {
        nil
    }
}

extension SecretStores {
    /// The secret store for a `UserDefaultsStore` over `defaults`: for now none (secrets stay in `defaults`).
    public static func forDefaults(_ defaults: UserDefaults) -> (any SecretStore)? {
        nil
    }
}
