import Foundation

/// Where `--store` says the settings live: a JSON file or an etcd cluster.
enum StoreAddress: Equatable {
    /// A JSON file: a path as given (relative to the current directory, or absolute), `~` already expanded.
    case file(String)
    /// An etcd cluster: `etcd://host:port[,host:port…][/prefix/]`, or `etcds://` for https, as given.
    case etcd(String)

    /// The forms `--store` takes, for messages.
    static let forms =
        "a file path (settings.json, ./a:b.json, ~/demo.json), file:///path.json, or "
        + "etcd://host:port[,host:port...][/prefix/] (etcds:// for https)"

    /// Reads the value of `--store`. A value that starts with `scheme://` is a URL: `etcd://` and `file://` are
    /// served, any other scheme is refused (it would otherwise become a folder named `http:`). Anything else is a
    /// file path, colons and all; a leading `~` or `~/` is the directory `$HOME` names.
    static func parse(_ text: String, home: String?) throws(DemoCommand.UsageError) -> StoreAddress {
        guard !text.isEmpty else { throw DemoCommand.UsageError(message: "--store needs a path: --store <path.json>") }
        if let scheme = scheme(of: text) {
            switch scheme.lowercased() {
            case "etcd", "etcds":
                return .etcd(text)
            case "file":
                return .file(try filePath(ofURL: text))
            default:
                throw DemoCommand.UsageError(
                    message: "--store \(text): the demo does not serve \(scheme):// addresses; --store takes "
                        + forms)
            }
        }
        guard text.hasPrefix("~") else { return .file(text) }
        let user = text.dropFirst().prefix { $0 != "/" }
        guard user.isEmpty else {
            throw DemoCommand.UsageError(
                message: "--store \(text): only ~ and ~/ are expanded (to $HOME); write the path out")
        }
        guard let home, !home.isEmpty else {
            throw DemoCommand.UsageError(message: "--store \(text): HOME is not set; write the path out")
        }
        return .file(home + text.dropFirst())
    }

    /// `http` for `http://…`: letters, digits, `+`, `-` and `.` after a letter, then `://`.
    private static func scheme(of text: String) -> Substring? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme
    }

    /// `/a b/x.json` for `file:///a%20b/x.json` or `file://localhost/a%20b/x.json`.
    private static func filePath(ofURL text: String) throws(DemoCommand.UsageError) -> String {
        let rest = text.dropFirst("file://".count)
        let host = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(host.count)
        guard host.isEmpty || host.lowercased() == "localhost" else {
            throw DemoCommand.UsageError(
                message: "--store \(text): a file URL names this machine's files only: file:///path.json")
        }
        guard path.count > 1, let decoded = String(path).removingPercentEncoding else {
            throw DemoCommand.UsageError(message: "--store \(text) names no file: file:///path.json")
        }
        return decoded
    }
}
