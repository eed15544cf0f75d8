import Foundation
import StorableConfig
import StorableConfigCloud
import StorableConfigEtcd
import StorableConfigSchema
import StorableConfigSecrets

/// Runs a parsed command against the demo's configs.
struct DemoTool {
    /// A failure to report with exit status 1 (`usage` false) or 2 (`usage` true).
    struct Failure: Error {
        var message: String
        var usage = false
    }

    /// The store the settings live in (with `--cloud`, this device's own).
    let store: any ConfigStore
    let configs: [NamedConfig]
    /// With `--cloud`: the sync that the configs were created over.
    let cloudSync: CloudSync?
    /// The first write that failed since the tool started; a failed command prints no confirmation.
    var writeFailure: () -> StorableConfigError? = { nil }

    private func writeFailed() -> Bool { writeFailure() != nil }

    /// Opens the store that `--store` names: an etcd cluster, a JSON file, or the default JSON file when
    /// `address` is nil (for a `device` of a simulated cloud, `devices/<device>/settings.json` beside it).
    /// Nothing is created until something is written.
    static func openStore(_ address: StoreAddress?, device: String? = nil) throws(Failure) -> any ConfigStore {
        var url: URL
        switch address {
        case .etcd(let location)?: return try openEtcd(location)
        case .file(let path)?: url = URL(fileURLWithPath: path)
        case nil:
            url = JSONFileStore.defaultURL(namespace: DemoConfig.namespace)
            if let device {
                url = url.deletingLastPathComponent().appendingPathComponent("devices/\(device)/settings.json")
            }
        }
        do {
            // A damaged file is refused, not moved aside: a tool for looking at settings changes nothing it
            // cannot read. The secret settings (twitter.apiToken) are kept apart, beside the file.
            return SecretRoutingStore(wrapping: try JSONFileStore(url: url, refusingCorruptFile: true))
        } catch {
            throw Failure(message: "cannot open the settings: \(error)")
        }
    }

    /// `etcd://127.0.0.1:2379,127.0.0.1:22379/fleet/` (or `etcds://` for https): the endpoints, and the path
    /// (leading slash included) as the prefix. Credentials and TLS files come from the environment
    /// (STORABLE_CONFIG_ETCD_USER, ..._PASSWORD, ..._CACERT, ..._CERT, ..._KEY), never from the command line; so
    /// does the snapshot's path (STORABLE_CONFIG_ETCD_SNAPSHOT), with which the demo works from the last known
    /// values while no member answers.
    private static func openEtcd(_ location: String) throws(Failure) -> EtcdStore {
        let secure = location.lowercased().hasPrefix("etcds://")
        let rest = location.dropFirst(secure ? "etcds://".count : "etcd://".count)
        let hosts = rest.prefix { $0 != "/" }
        let prefix = String(rest.dropFirst(hosts.count))
        let endpoints = hosts.split(separator: ",").compactMap { URL(string: (secure ? "https://" : "http://") + $0) }
        guard !endpoints.isEmpty else {
            throw Failure(
                message: "--store \(location) names no etcd endpoint: etcd[s]://host:port[,host:port][/prefix/]")
        }
        let environment = ProcessInfo.processInfo.environment
        let credentials = environment["STORABLE_CONFIG_ETCD_USER"].map { user in
            EtcdStore.Credentials(user: user, password: environment["STORABLE_CONFIG_ETCD_PASSWORD"] ?? "")
        }
        let file = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) } }
        var tls = EtcdStore.TLS(
            caFile: file("STORABLE_CONFIG_ETCD_CACERT"), certificateFile: file("STORABLE_CONFIG_ETCD_CERT"),
            keyFile: file("STORABLE_CONFIG_ETCD_KEY"))
        tls.pkcs12File = file("STORABLE_CONFIG_ETCD_PKCS12")
        tls.pkcs12Password = environment["STORABLE_CONFIG_ETCD_PKCS12_PASSWORD"] ?? ""
        let store: EtcdStore
        do {
            store = try EtcdStore(
                endpoints: endpoints, prefix: prefix, credentials: credentials, tls: secure ? tls : nil, timeout: 3,
                snapshot: file("STORABLE_CONFIG_ETCD_SNAPSHOT"),
                allowingPasswordOverPlainHTTP: environment["STORABLE_CONFIG_ETCD_ALLOW_PLAIN_PASSWORD"] == "1")
        } catch {
            let hint =
                "\(error)".contains("clear text")
                ? "; to send it all the same, set STORABLE_CONFIG_ETCD_ALLOW_PLAIN_PASSWORD=1, or use etcds://" : ""
            throw Failure(message: "cannot use etcd at \(hosts): \(error)\(hint)")
        }
        // Started from the snapshot: the store has said so (a warning), and a write fails as it would.
        if case .snapshot = store.provenance { return store }
        guard store.isConnected else {
            throw Failure(
                message: "cannot read etcd at \(endpoints.map(\.absoluteString).joined(separator: ", ")): "
                    + (store.connectionProblem ?? "no member answered"))
        }
        return store
    }

    /// The demo's configs over `store`, or, with `cloudSync` (made over `store`), over the sync's store, with
    /// their synced settings merged with the cloud's.
    init(store: any ConfigStore, cloudSync: CloudSync? = nil) {
        self.store = store
        self.cloudSync = cloudSync
        configs = NamedConfig.all(store: cloudSync?.store ?? store)
        if let cloudSync { Self.sync(configs, with: cloudSync) }
    }

    func run(_ action: DemoCommand.Action) throws(Failure) {
        switch action {
        case .launch: try launch()
        case .list(let json): json ? listJSON() : listTable()
        case .get(let name): print(Self.displayed(try setting(named: name).setting.valueText))
        case .set(let name, let text):
            try set(name, to: text)
        case .reset(nil):
            // Only what is stored is removed: with nothing stored, nothing is written (or created).
            for named in configs where isStored(named.config.allSettings) { named.config.reset() }
            if !writeFailed() { print("reset every setting to its default") }
        case .reset(let name?):
            if let named = configs.first(where: { $0.name == name }) {
                if isStored(named.config.allSettings) { named.config.reset() }
                if !writeFailed() { print("reset \(name) to its defaults") }
            } else {
                let (shortName, setting) = try setting(named: name)
                if isStored([setting]) { setting.reset() }
                if !writeFailed() { print("reset \(shortName) to its default: \(Self.displayed(setting.valueText))") }
            }
        case .export(let names, let includingSecrets):
            try export(names, includingSecrets: includingSecrets)
        case .importDocument(let path, let replace):
            try importDocument(path: path, replace: replace)
        case .watch:
            watch()
        case .history(let name, let limit):
            try history(name, limit: limit)
        case .rollback(let name, let revision, let seen):
            try rollBack(name, to: revision, ifUnchangedSince: seen)
        case .sync:
            printSynced()
        case .schema:
            print(StorableConfig.jsonSchema(of: configs.map(\.config), title: "storable-config-demo settings"))
        case .appConfigSpecification(let names, let bundleIdentifier):
            try printAppConfigSpecification(names, bundleIdentifier: bundleIdentifier)
        case .help(let topic):
            print(topic.map(DemoHelp.command) ?? DemoHelp.general)
        }
    }

    /// Parses `text` as the setting's type and stores it: exit 2 for a value that is not one, exit 1 for a stored
    /// value that the change would have to destroy.
    private func set(_ name: String, to text: String) throws(Failure) {
        let (shortName, setting) = try setting(named: name)
        let shownText = setting.isSecret ? StorableConfigError.redacted : text
        do {
            try setting.assign(parsing: text)
        } catch StorableConfigError.invalidValue(_, _, let reason) {
            throw Failure(message: "invalid value '\(shownText)' for \(shortName): \(reason)", usage: true)
        } catch StorableConfigError.typeMismatch(_, _, let found, _, let foundText) {
            // A record collection changes only the records it names; a stored value that is not a dictionary of
            // records is not one of them, and is kept.
            throw Failure(
                message: "cannot set \(shortName): the value stored for it, \(foundText ?? found.description), is "
                    + "not a dictionary of records by id; it is kept, and nothing was changed "
                    + "(storable-config-demo reset \(shortName) removes it)")
        } catch {
            throw Failure(
                message: "invalid value '\(shownText)' for \(shortName): expected \(setting.valueTypeName), "
                    + "\(setting.expectedFormat)", usage: true)
        }
        if !writeFailed() { print("\(shortName) = \(shown(setting))") }
    }

    /// Whether the store holds a value for any of `settings`, of the right type or not.
    private func isStored(_ settings: [any AnySetting]) -> Bool {
        let keys = settings.map(\.key)
        return !((try? store.values(forKeys: keys))?.isEmpty ?? false)
    }

    /// The sentence for a write that failed: what was not stored, and why.
    func message(for failure: StorableConfigError) -> String {
        switch failure {
        case .writeFailed(let key, let reason), .encodingFailed(let key, let reason):
            let name = rows().first { $0.setting.key == key }?.name ?? key
            return "could not store \(name): \(reason)"
        default:
            return failure.description
        }
    }

    /// Prints the document of the named configs, or of all of them; secrets only when asked.
    private func export(_ names: [String], includingSecrets: Bool) throws(Failure) {
        let exported = try configs(named: names)
        do {
            print(try ConfigDocument(exporting: exported, includingSecrets: includingSecrets).jsonText())
        } catch {
            throw Failure(message: error.description)
        }
    }

    /// Applies the document at `path` (`-`: standard input): exit 1 if it cannot be read, 2 if it cannot be
    /// used; the store is then unchanged.
    private func importDocument(path: String, replace: Bool) throws(Failure) {
        let source = path == "-" ? "standard input" : path
        let data = try Self.contents(of: path)
        guard !data.isEmpty else {
            throw Failure(message: "cannot import \(source): it is empty; a settings document is what export prints")
        }
        do {
            let document = try ConfigDocument(jsonText: String(decoding: data, as: UTF8.self))
            try document.apply(to: configs.map(\.config), mode: replace ? .replace : .merge)
            let names = document.configs.keys.sorted().joined(separator: ", ")
            if !writeFailed() { print("imported \(names.isEmpty ? "nothing" : names) from \(source)") }
        } catch {
            if case .unreadable = error {
                throw Failure(message: "\(source): \(error.description)")
            }
            throw Failure(message: "\(source): \(error.description)", usage: true)
        }
    }

    /// The most `import` reads: a settings document is kilobytes, and `/dev/zero` or `yes |` never ends.
    static let largestDocument = 16 * 1024 * 1024

    /// The bytes of the file at `path`, or of standard input for `-`, read with read(2), so that a pipe
    /// (`<(…)`), a device (`/dev/null`) or a FIFO reads as a file does; at most ``largestDocument`` bytes.
    private static func contents(of path: String) throws(Failure) -> Data {
        let source = path == "-" ? "standard input" : path
        func failure(_ code: Int32) -> Failure {
            Failure(message: "cannot read \(source): \(String(cString: strerror(code)))")
        }
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(errno) }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw Failure(message: "cannot read \(source): it is a directory, not a settings document")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno)
            }
            data.append(contentsOf: buffer[..<count])
            if data.count > largestDocument {
                throw Failure(
                    message: "cannot import \(source): it holds more than \(largestDocument) bytes (16 MiB), the most "
                        + "a settings document may hold; nothing was changed")
            }
        }
    }

    /// Prints each change to the settings as it happens, one line each, until the program is stopped. Creates
    /// nothing: a JSON file whose directory does not exist yet is watched once something creates it.
    private func watch() -> Never {
        var tokens: [ObservationToken] = []
        for named in configs {
            let name = named.name
            tokens.append(
                named.config.observe { change in
                    let line = "\(name).\(change.name): \(change.oldValueText) → \(change.newValueText)\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                })
        }
        if let file = (store as? SecretRoutingStore)?.wrappedStore as? JSONFileStore {
            let directory = file.url.deletingLastPathComponent().path
            if !FileManager.default.fileExists(atPath: directory) {
                FileHandle.standardOutput.write(Data("waiting for the directory \(directory) to be created\n".utf8))
                while !FileManager.default.fileExists(atPath: directory) { usleep(200_000) }
            }
            do {
                try file.startWatching()
                // What was written before the watch began.
                try configs.first?.config.reload()
            } catch {
                exitWithMessage("cannot watch \(file.url.path): \(error)", status: 1)
            }
        }
        // Said once the watch is under way, so that a change made after this line is seen.
        FileHandle.standardOutput.write(Data("watching \(store) (stop with Ctrl-C)\n".utf8))
        while true {
            sleep(3600)
            withExtendedLifetime(tokens) {}
        }
    }

    /// Says whether this is the first launch, records the launch, and shows the settings. If the launch
    /// cannot be recorded, says so instead, and fails: the values in memory would not be what is stored.
    private func launch() throws(Failure) {
        guard let app = configs.first?.config as? AppConfig else { return }
        let isFirstLaunch = app.isFirstLaunch
        let launch = app.launchCount + 1
        let last = app.lastLaunch == nil ? "" : " (last launch \(app.$lastLaunch.valueText))"
        app.batch {
            app.isFirstLaunch = false
            app.launchCount += 1
            app.lastLaunch = Date()
        }
        if let failure = writeFailure() {
            print(
                isFirstLaunch
                    ? "First launch: welcome! This launch could not be recorded, so the next one will be a first "
                        + "launch too."
                    : "Welcome back: this is launch \(launch)\(last). This launch could not be recorded.")
            var reason = failure.description
            if case .writeFailed(_, let inner) = failure { reason = inner }
            throw Failure(message: "this launch was not recorded in \(store): \(reason)")
        }
        print(
            isFirstLaunch
                ? "First launch: welcome! This run is recorded, so the next one will not be a first launch."
                : "Welcome back: this is launch \(launch)\(last).")
        // The file or the cluster; the secrets' place is in Demo.md.
        print("Settings are stored in \((store as? SecretRoutingStore)?.wrappedStore ?? store)\(cloudNote):\n")
        listTable()
    }

    /// The value as `list` and `set` show it: `<redacted>` for a secret (`get` prints it).
    func shown(_ setting: any AnySetting) -> String {
        setting.isRedacted ? StorableConfigError.redacted : Self.displayed(setting.valueText)
    }

    /// `text` safe to print on a terminal: text holding a control character (a line break, an escape that
    /// would recolour the terminal) is shown as a JSON string, `"a\nb"`, `"\u001b[31m"`, which `set` reads back.
    static func displayed(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// C0 and C1 control characters and DEL.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    func rows() -> [(name: String, setting: any AnySetting)] {
        configs.flatMap { named in named.config.allSettings.map { ("\(named.name).\($0.name)", $0) } }
    }

    /// Whether the store says where a stored value came from (another device, through the cloud).
    static func isFromElsewhere(_ setting: any AnySetting) -> Bool {
        setting.layer == .stored && setting.origin != "the store"
    }

    private func listTable() {
        let header = ["SETTING", "VALUE", "DEFAULT", "SET", "SOURCE", "KEY"]
        let withSources = rows().contains {
            $0.setting.layer == .file || $0.setting.hiddenSourceValue != nil || Self.isFromElsewhere($0.setting)
        }
        // An empty string shows as "" so that the columns stay readable.
        func shown(_ text: String) -> String { text.isEmpty ? "\"\"" : text }
        let lines = rows().map { row in
            [
                row.name, shown(self.shown(row.setting)),
                shown(
                    row.setting.isSecret ? StorableConfigError.redacted : Self.displayed(row.setting.defaultValueText)),
                row.setting.isSet ? "yes" : "no", row.setting.layer.description, row.setting.key,
            ] + (withSources ? [Self.sourceNote(row.setting)] : [])
        }
        let heading = header + (withSources ? ["FROM"] : [])
        let widths = (0..<heading.count).map { column in
            ([heading] + lines).map { $0[column].count }.max() ?? 0
        }
        for line in [heading] + lines {
            let cells = line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// Where a value from a file comes from, and a file's value that the store or an override hides.
    private static func sourceNote(_ setting: any AnySetting) -> String {
        var note = setting.layer == .file || isFromElsewhere(setting) ? setting.origin : ""
        if let hidden = setting.hiddenSourceValue {
            note +=
                (note.isEmpty ? "" : "; ")
                + (setting.layer == .stored
                    ? "the stored value hides \(displayed(hidden.valueText)) from the \(hidden.origin) (reset to read it)"
                    : "hides \(displayed(hidden.valueText)) from the \(hidden.origin)")
        }
        return note
    }

    private func listJSON() {
        var object: [String: StoredValue] = [:]
        for row in rows() {
            if row.setting.isRedacted {
                object[row.name] = .string(StorableConfigError.redacted)
            } else if row.setting is RecordCollection<Income> {
                // An array of records, in order, as `get`, `list` and `set` show them (stored: a dictionary by id).
                object[row.name] = (try? StoredValue(jsonText: row.setting.valueText)) ?? .array([])
            } else {
                object[row.name] = row.setting.storedValue
            }
        }
        print(StoredValue.dictionary(object).jsonText(pretty: true))
    }

    /// Finds `<config>.<setting>`, or fails naming what is valid.
    func setting(named name: String) throws(Failure) -> (name: String, setting: any AnySetting) {
        let configNames = configs.map(\.name).joined(separator: ", ")
        guard let dot = name.firstIndex(of: ".") else {
            if let named = configs.first(where: { $0.name == name }) {
                throw Failure(
                    message: "'\(name)' is a config; name one of its settings: \(settingNames(of: named))", usage: true)
            }
            throw Failure(
                message: "'\(name)' is not <config>.<setting> (for example app.userName); configs are \(configNames)",
                usage: true)
        }
        let configName = String(name[..<dot])
        let settingName = String(name[name.index(after: dot)...])
        guard let named = configs.first(where: { $0.name == configName }) else {
            throw Failure(message: "unknown config '\(configName)'; configs are \(configNames)", usage: true)
        }
        guard let setting = named.config.allSettings.first(where: { $0.name == settingName }) else {
            throw Failure(
                message: "unknown setting '\(name)'; settings of \(configName) are \(settingNames(of: named))",
                usage: true)
        }
        return (name, setting)
    }

    private func settingNames(of named: NamedConfig) -> String {
        named.config.allSettings.map(\.name).joined(separator: ", ")
    }
}
