import Foundation
import StorableConfig
import StorableConfigEtcd

/// Runs a parsed command against the demo's configs.
struct DemoTool {
    /// A failure to report with exit status 1 (`usage` false) or 2 (`usage` true).
    struct Failure: Error {
        var message: String
        var usage = false
    }

    let store: any ConfigStore
    let configs: [NamedConfig]
    /// Whether a write failed since the tool started; a failed command prints no confirmation.
    var writeFailed: () -> Bool = { false }

    /// Opens the store that `--store` names: an etcd cluster for `etcd://host:port[,host:port…][/prefix/]`,
    /// else the JSON file at `path`, or at the default location when `path` is nil.
    static func openStore(path: String?) throws(Failure) -> any ConfigStore {
        if let path, path.hasPrefix("etcd://") { return try openEtcd(path) }
        let url = path.map { URL(fileURLWithPath: $0) } ?? JSONFileStore.defaultURL(namespace: DemoConfig.namespace)
        do {
            // A damaged file is refused, not moved aside: a tool for looking at settings changes nothing it
            // cannot read.
            return try JSONFileStore(url: url, refusingCorruptFile: true)
        } catch {
            throw Failure(message: "cannot open the settings: \(error)")
        }
    }

    /// `etcd://127.0.0.1:2379,127.0.0.1:22379/fleet/`: the endpoints, and the path (leading slash included) as
    /// the prefix. Credentials come from the environment (STORABLE_CONFIG_ETCD_USER, ..._PASSWORD), never from
    /// the command line.
    private static func openEtcd(_ location: String) throws(Failure) -> EtcdStore {
        let rest = location.dropFirst("etcd://".count)
        let hosts = rest.prefix { $0 != "/" }
        let prefix = String(rest.dropFirst(hosts.count))
        let endpoints = hosts.split(separator: ",").compactMap { URL(string: "http://\($0)") }
        guard !endpoints.isEmpty else {
            throw Failure(message: "--store \(location) names no etcd endpoint: etcd://host:port[,host:port][/prefix/]")
        }
        let environment = ProcessInfo.processInfo.environment
        let credentials = environment["STORABLE_CONFIG_ETCD_USER"].map { user in
            EtcdStore.Credentials(user: user, password: environment["STORABLE_CONFIG_ETCD_PASSWORD"] ?? "")
        }
        let store: EtcdStore
        do {
            store = try EtcdStore(endpoints: endpoints, prefix: prefix, credentials: credentials, timeout: 3)
        } catch {
            throw Failure(message: "cannot use etcd at \(hosts): \(error)")
        }
        guard store.isConnected else {
            throw Failure(
                message: "no etcd member answered at \(endpoints.map(\.absoluteString).joined(separator: ", "))")
        }
        return store
    }

    init(store: any ConfigStore) {
        self.store = store
        configs = NamedConfig.all(store: store)
    }

    func run(_ action: DemoCommand.Action) throws(Failure) {
        switch action {
        case .launch: launch()
        case .list(let json): json ? listJSON() : listTable()
        case .get(let name): print(try setting(named: name).setting.valueText)
        case .set(let name, let text):
            let (shortName, setting) = try setting(named: name)
            let shownText = setting.isSecret ? StorableConfigError.redacted : text
            do {
                try setting.assign(parsing: text)
            } catch StorableConfigError.invalidValue(_, _, let reason) {
                throw Failure(message: "invalid value '\(shownText)' for \(shortName): \(reason)", usage: true)
            } catch {
                throw Failure(
                    message: "invalid value '\(shownText)' for \(shortName): expected \(setting.valueTypeName), "
                        + "\(setting.expectedFormat)", usage: true)
            }
            if !writeFailed() { print("\(shortName) = \(shown(setting))") }
        case .reset(nil):
            for named in configs { named.config.reset() }
            if !writeFailed() { print("reset every setting to its default") }
        case .reset(let name?):
            if let named = configs.first(where: { $0.name == name }) {
                named.config.reset()
                if !writeFailed() { print("reset \(name) to its defaults") }
            } else {
                let (shortName, setting) = try setting(named: name)
                setting.reset()
                if !writeFailed() { print("reset \(shortName) to its default: \(setting.valueText)") }
            }
        case .export(let names, let includingSecrets):
            try export(names, includingSecrets: includingSecrets)
        case .importDocument(let path, let replace):
            try importDocument(path: path, replace: replace)
        case .watch:
            watch()
        case .schema:
            print(StorableConfig.jsonSchema(of: configs.map(\.config), title: "storable-config-demo settings"))
        case .help(let topic):
            print(topic.map(DemoHelp.command) ?? DemoHelp.general)
        }
    }

    /// Prints the document of the named configs, or of all of them; secrets only when asked.
    private func export(_ names: [String], includingSecrets: Bool) throws(Failure) {
        var chosen: [StorableConfig] = []
        for name in names {
            guard let named = configs.first(where: { $0.name == name }) else {
                throw Failure(
                    message: "unknown config '\(name)'; configs are \(configs.map(\.name).joined(separator: ", "))",
                    usage: true)
            }
            chosen.append(named.config)
        }
        do {
            let exported = names.isEmpty ? configs.map(\.config) : chosen
            print(try ConfigDocument(exporting: exported, includingSecrets: includingSecrets).jsonText())
        } catch {
            throw Failure(message: error.description)
        }
    }

    /// Applies the document at `path` (`-`: standard input): exit 1 if it cannot be read, 2 if it cannot be
    /// used; the store is then unchanged.
    private func importDocument(path: String, replace: Bool) throws(Failure) {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw Failure(message: "cannot read \(path): \(error.localizedDescription)")
            }
        }
        let source = path == "-" ? "standard input" : path
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

    /// Prints each change to the settings as it happens, one line each, until the program is stopped.
    private func watch() -> Never {
        if let file = store as? JSONFileStore {
            do {
                try file.startWatching()
            } catch {
                print("cannot watch \(file.url.path): \(error)")
                exit(1)
            }
        }
        var tokens: [ObservationToken] = []
        for named in configs {
            let name = named.name
            tokens.append(
                named.config.observe { change in
                    let line = "\(name).\(change.name): \(change.oldValueText) → \(change.newValueText)\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                })
        }
        FileHandle.standardOutput.write(Data("watching \(store) (stop with Ctrl-C)\n".utf8))
        while true {
            sleep(3600)
            withExtendedLifetime(tokens) {}
        }
    }

    private func launch() {
        guard let app = configs.first?.config as? AppConfig else { return }
        if app.isFirstLaunch {
            print("First launch: welcome! This run is recorded, so the next one will not be a first launch.")
        } else {
            let last = app.lastLaunch == nil ? "" : " (last launch \(app.$lastLaunch.valueText))"
            print("Welcome back: this is launch \(app.launchCount + 1)\(last).")
        }
        app.batch {
            app.isFirstLaunch = false
            app.launchCount += 1
            app.lastLaunch = Date()
        }
        print("Settings are stored in \(store):\n")
        listTable()
    }

    /// The value as `list` and `set` show it: `<redacted>` for a secret (`get` prints it).
    private func shown(_ setting: any AnySetting) -> String {
        setting.isSecret ? StorableConfigError.redacted : setting.valueText
    }

    private func rows() -> [(name: String, setting: any AnySetting)] {
        configs.flatMap { named in named.config.allSettings.map { ("\(named.name).\($0.name)", $0) } }
    }

    private func listTable() {
        let header = ["SETTING", "VALUE", "DEFAULT", "SET", "SOURCE", "KEY"]
        // An empty string shows as "" so that the columns stay readable.
        func shown(_ text: String) -> String { text.isEmpty ? "\"\"" : text }
        let lines = rows().map { row in
            [
                row.name, shown(self.shown(row.setting)),
                shown(row.setting.isSecret ? StorableConfigError.redacted : row.setting.defaultValueText),
                row.setting.isSet ? "yes" : "no", row.setting.source.description, row.setting.key,
            ]
        }
        let widths = (0..<header.count).map { column in
            ([header] + lines).map { $0[column].count }.max() ?? 0
        }
        for line in [header] + lines {
            let cells = line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    private func listJSON() {
        var object: [String: StoredValue] = [:]
        for row in rows() {
            object[row.name] = row.setting.isSecret ? .string(StorableConfigError.redacted) : row.setting.storedValue
        }
        print(StoredValue.dictionary(object).jsonText(pretty: true))
    }

    /// Finds `<config>.<setting>`, or fails naming what is valid.
    private func setting(named name: String) throws(Failure) -> (name: String, setting: any AnySetting) {
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
