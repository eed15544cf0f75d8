import Foundation

extension ConfigSource {
    /// The directory of credentials that systemd passes to a service (`LoadCredential=`, `SetCredential=`,
    /// `LoadCredentialEncrypted=`): a secret directory source, read-only, at `$CREDENTIALS_DIRECTORY`.
    ///
    /// Each credential is a file named after a setting's environment variable or key, as in any
    /// ``directory(_:optional:secret:)`` source:
    ///
    /// ```swift
    /// StorableConfig.defaultSources = ConfigSources(aboveStore: [ConfigSource.credentialsDirectory()].compactMap { $0 })
    /// ```
    ///
    /// - Parameter environment: The variables to look in; the process's environment by default.
    /// - Returns: The source, or `nil` when `CREDENTIALS_DIRECTORY` is unset or empty (the service was started
    ///   without credentials, or not by systemd).
    public static func credentialsDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ConfigSource? {
        guard let path = environment["CREDENTIALS_DIRECTORY"], !path.isEmpty else { return nil }
        return .directory(path, secret: true)
    }
}
