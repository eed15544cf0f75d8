/// A parsed command line.
struct DemoCommand: Equatable {
    enum Action: Equatable {
        case launch
        case list(json: Bool)
        case get(String)
        case set(String, String)
        case reset(String?)
        case export([String], includingSecrets: Bool)
        case importDocument(path: String, replace: Bool)
        case schema
        /// The configs named (all when none is), and the app's bundle identifier (`--bundle-id`).
        case appConfigSpecification([String], bundleIdentifier: String)
        case watch
        case history(String, limit: Int)
        /// `ifUnchangedSince`: the revision the operator saw the key at (`--if-unchanged-since`), if given.
        case rollback(String, revision: Int64, ifUnchangedSince: Int64?)
        /// With `--cloud`: merges with the cloud and prints the synced settings, each with the device it came from.
        case sync
        case help(String?)
    }

    /// What `--cloud`, `--device` and `--offline` say: this run is one device of a simulated cloud.
    struct Cloud: Equatable {
        /// The directory that holds the cloud's values, one file per key.
        var directory: String
        /// The device's name, which also names its settings file; `nil`: the identifier the sync keeps in the store.
        var device: String?
        /// This run does not reach the cloud: its changes are stamped, kept, and go up at the next run without it.
        var offline = false
    }

    var action: Action
    /// What `--store` names; `nil`: the default JSON file.
    var store: StoreAddress?
    /// The options that override a setting for this run, each as `--option=value`, for the library to read.
    var overrideArguments: [String] = []
    /// What `--read` names, in the order given: read-only sources below the store.
    var readBelow: [String] = []
    /// What `--read-over` names, in the order given: read-only sources above the store.
    var readAbove: [String] = []
    /// What `--cloud` and the options that go with it say; `nil`: no cloud.
    var cloud: Cloud?

    /// A command line that does not parse: exit status 2.
    struct UsageError: Error, Equatable {
        var message: String
    }

    static let commands = [
        "list", "get", "set", "reset", "export", "import", "schema", "appconfig-spec", "watch", "history", "rollback",
        "sync", "help",
    ]

    /// The bundle identifier that `appconfig-spec` gives without `--bundle-id`.
    static let demoBundleIdentifier = "com.example.StorableConfigDemo"

    /// Parses the arguments after the program name.
    ///
    /// - Parameters:
    ///   - overrideOptions: The options that override a setting (`--app-config-user-name`), each with whether
    ///     its setting is a `Bool`, whose option may stand alone (meaning `true`).
    ///   - home: The directory that a leading `~` in `--store` names.
    static func parse(_ arguments: [String], overrideOptions: [String: Bool] = [:], home: String? = nil)
        throws(UsageError) -> DemoCommand
    {
        var storeText: String?
        var readBelow: [String] = []
        var readAbove: [String] = []
        var cloudDirectory: String?
        var device: String?
        var offline = false
        var overrideArguments: [String] = []
        var json = false
        var replace = false
        var includeSecrets = false
        var limitText: String?
        var unchangedSinceText: String?
        var bundleIdentifier: String?
        var wantsHelp = false
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            // After `set <config>.<setting>`, the next argument is the value, whatever it looks like (`-h`, `--json`,
            // an override's option); only `--`, which ends the options anywhere, comes before it.
            let isSetValue = positionals.count == 2 && positionals.first == "set" && argument != "--"
            // `import -` reads standard input.
            let isStandardInput = argument == "-" && positionals.first == "import"
            if optionsEnded || isSetValue || isStandardInput || !isOption(argument) {
                positionals.append(argument)
                continue
            }
            let optionName = String(argument.prefix { $0 != "=" })
            if let isBool = overrideOptions[optionName] {
                overrideArguments.append(try overrideArgument(optionName, argument, arguments, &index, isBool: isBool))
                continue
            }
            switch argument {
            case "--":
                optionsEnded = true
            case "--store",
                _ where argument.hasPrefix("--store="):
                storeText = try Self.optionValue(
                    argument, "--store", arguments, &index, missing: "--store needs a path: --store <path.json>")
            case "--read", "--read-over",
                _ where argument.hasPrefix("--read=") || argument.hasPrefix("--read-over="):
                let option = argument.hasPrefix("--read-over") ? "--read-over" : "--read"
                let path = Self.expandingHome(
                    try Self.optionValue(
                        argument, option, arguments, &index,
                        missing: "\(option) needs a path: \(option) <file.json | file.env | directory>"), home: home)
                if option == "--read" { readBelow.append(path) } else { readAbove.append(path) }
            case "--cloud",
                _ where argument.hasPrefix("--cloud="):
                cloudDirectory = Self.expandingHome(
                    try Self.optionValue(
                        argument, "--cloud", arguments, &index,
                        missing: "--cloud needs a directory: --cloud <directory>"
                    ), home: home)
            case "--device",
                _ where argument.hasPrefix("--device="):
                device = try Self.optionValue(
                    argument, "--device", arguments, &index, missing: "--device needs a name: --device <name>")
            case "--offline":
                offline = true
            case "--json":
                json = true
            case "--replace":
                replace = true
            case "--include-secrets":
                includeSecrets = true
            case "--limit",
                _ where argument.hasPrefix("--limit="):
                limitText = try Self.optionValue(
                    argument, "--limit", arguments, &index, missing: "--limit needs a number: --limit <N>")
            case "--if-unchanged-since",
                _ where argument.hasPrefix("--if-unchanged-since="):
                unchangedSinceText = try Self.optionValue(
                    argument, "--if-unchanged-since", arguments, &index,
                    missing: "--if-unchanged-since needs a revision: --if-unchanged-since <revision>")
            case "--bundle-id",
                _ where argument.hasPrefix("--bundle-id="):
                bundleIdentifier = try Self.optionValue(
                    argument, "--bundle-id", arguments, &index,
                    missing: "--bundle-id needs an identifier: --bundle-id com.example.app")
            case "--help", "-h":
                wantsHelp = true
            default:
                throw UsageError(
                    message: "unknown option '\(argument)'; options are --store <path.json>, --read <path>, "
                        + "--read-over <path>, --cloud <directory>, --device <name>, --offline, --json (for list), "
                        + "--replace (for import), --include-secrets (for export), --limit <N> (for history), "
                        + "--if-unchanged-since <revision> (for rollback), --bundle-id <id> (for appconfig-spec), "
                        + "--help")
            }
        }
        let store = try storeText.map { text throws(UsageError) in try StoreAddress.parse(text, home: home) }
        let cloud = try Self.cloud(directory: cloudDirectory, device: device, offline: offline, store: store)
        func made(_ action: Action) -> DemoCommand {
            DemoCommand(
                action: action, store: store, overrideArguments: overrideArguments, readBelow: readBelow,
                readAbove: readAbove, cloud: cloud)
        }
        let command = positionals.first
        if wantsHelp {
            if let command, !commands.contains(command) {
                throw UsageError(
                    message: "unknown command '\(command)'; commands are \(commands.joined(separator: ", "))")
            }
            return made(.help(command))
        }
        let operands = Array(positionals.dropFirst())
        if json && command != "list" {
            throw UsageError(message: "--json applies only to list: storable-config-demo list --json")
        }
        if includeSecrets && command != "export" {
            throw UsageError(
                message: "--include-secrets applies only to export: storable-config-demo export --include-secrets")
        }
        if replace && command != "import" {
            throw UsageError(message: "--replace applies only to import: storable-config-demo import --replace <file>")
        }
        if limitText != nil && command != "history" {
            throw UsageError(
                message: "--limit applies only to history: storable-config-demo history <config>.<setting> --limit 5")
        }
        if unchangedSinceText != nil && command != "rollback" {
            throw UsageError(
                message: "--if-unchanged-since applies only to rollback: storable-config-demo rollback "
                    + "<config>.<setting> <revision> --if-unchanged-since <revision>")
        }
        if bundleIdentifier != nil && command != "appconfig-spec" {
            throw UsageError(
                message: "--bundle-id applies only to appconfig-spec: storable-config-demo appconfig-spec "
                    + "--bundle-id com.example.app")
        }
        func expect(_ count: ClosedRange<Int>, _ synopsis: String) throws(UsageError) {
            guard count.contains(operands.count) else {
                let problem = operands.count < count.lowerBound ? "is missing an argument" : "has too many arguments"
                throw UsageError(message: "\(command ?? "") \(problem): storable-config-demo \(synopsis)")
            }
        }
        let action: Action
        switch command {
        case nil:
            action = .launch
        case "list":
            try expect(0...0, "list [--json]")
            action = .list(json: json)
        case "get":
            try expect(1...1, "get <config>.<setting>")
            action = .get(operands[0])
        case "set":
            try expect(2...2, "set <config>.<setting> <value>")
            action = .set(operands[0], operands[1])
        case "reset":
            try expect(0...1, "reset [<config>[.<setting>]]")
            action = .reset(operands.first)
        case "export":
            action = .export(operands, includingSecrets: includeSecrets)
        case "import":
            try expect(1...1, "import [--replace] <file>")
            action = .importDocument(path: operands[0], replace: replace)
        case "schema":
            try expect(0...0, "schema")
            action = .schema
        case "appconfig-spec":
            action = .appConfigSpecification(operands, bundleIdentifier: bundleIdentifier ?? demoBundleIdentifier)
        case "watch":
            try expect(0...0, "watch")
            action = .watch
        case "history":
            try expect(1...1, "history <config>.<setting> [--limit N]")
            var limit = 10
            if let limitText {
                guard let number = Int(limitText), number > 0 else {
                    throw UsageError(message: "--limit takes a whole number above 0, not '\(limitText)'")
                }
                limit = number
            }
            action = .history(operands[0], limit: limit)
        case "rollback":
            try expect(2...2, "rollback <config>.<setting> <revision> [--if-unchanged-since <revision>]")
            guard let revision = Int64(operands[1]), revision > 0 else {
                throw UsageError(
                    message:
                        "rollback takes a revision, a whole number above 0 as history prints it, not '\(operands[1])'")
            }
            var seen: Int64?
            if let unchangedSinceText {
                guard let number = Int64(unchangedSinceText), number > 0 else {
                    throw UsageError(
                        message: "--if-unchanged-since takes a revision, a whole number above 0 as history prints "
                            + "it, not '\(unchangedSinceText)'")
                }
                seen = number
            }
            action = .rollback(operands[0], revision: revision, ifUnchangedSince: seen)
        case "sync":
            try expect(0...0, "sync --cloud <directory> [--device <name>]")
            guard cloud != nil else {
                throw UsageError(
                    message: "sync needs a cloud: storable-config-demo sync --cloud <directory> --device <name>")
            }
            action = .sync
        case "help":
            guard operands.count <= 1 else {
                throw UsageError(message: "help takes one command: storable-config-demo help <command>")
            }
            if let topic = operands.first, !commands.contains(topic) {
                throw UsageError(
                    message: "unknown command '\(topic)'; commands are \(commands.joined(separator: ", "))")
            }
            action = .help(operands.first)
        case let other?:
            throw UsageError(
                message: "unknown command '\(other)'; commands are \(commands.joined(separator: ", ")) "
                    + "(or none, to simulate an app launch)")
        }
        return made(action)
    }

    /// What `--cloud`, `--device` and `--offline` make together: `--device` and `--offline` only with `--cloud`;
    /// a device name that can name a folder (letters, digits, `-`, `_`, `.`, not starting with `.`), and no
    /// etcd store under a device, whose cluster would be shared by every device.
    private static func cloud(directory: String?, device: String?, offline: Bool, store: StoreAddress?)
        throws(UsageError) -> Cloud?
    {
        guard let directory else {
            if device != nil || offline {
                throw UsageError(
                    message: "\(device != nil ? "--device" : "--offline") applies only with --cloud: "
                        + "storable-config-demo --cloud <directory> --device <name> [--offline] <command>")
            }
            return nil
        }
        guard !directory.isEmpty else { throw UsageError(message: "--cloud needs a directory: --cloud <directory>") }
        if let device {
            let allowed = device.utf8.allSatisfy { byte in
                [48...57, 65...90, 97...122].contains { $0.contains(byte) } || "-_.".utf8.contains(byte)
            }
            guard allowed, !device.isEmpty, !device.hasPrefix("."), device.utf8.count <= 64 else {
                throw UsageError(
                    message: "--device \(device.debugDescription): a device's name is 1 to 64 letters, digits, "
                        + "'-', '_' or '.' (not first), since it names the device's folder")
            }
        }
        if case .etcd? = store {
            throw UsageError(
                message: "--cloud syncs a device's own settings file; an etcd store is shared already: use --store "
                    + "<path.json>, or no --store (each device then has its own file)")
        }
        return Cloud(directory: directory, device: device, offline: offline)
    }

    /// The override `option` given as `argument` (which `index` follows), as `--option=value`: with `=`, its
    /// value; a `Bool`'s option alone is `true`, or takes a following `true` or `false`; any other takes the next
    /// argument, which must be there, and be neither an option nor a command (`--app-config-volume get` is a
    /// mistake far more often than a volume: such a value is written `--app-config-user-name=get`).
    private static func overrideArgument(
        _ option: String, _ argument: String, _ arguments: [String], _ index: inout Int, isBool: Bool
    ) throws(UsageError) -> String {
        if argument != option { return argument }
        let next = index < arguments.count ? arguments[index] : nil
        if isBool {
            guard let next, next == "true" || next == "false" else { return "\(option)=true" }
            index += 1
            return "\(option)=\(next)"
        }
        guard let next, !next.hasPrefix("--"), !commands.contains(next) else {
            let found = next.map { "'\($0)'" } ?? "nothing"
            throw UsageError(
                message: "\(option) needs a value, and is followed by \(found): write \(option)=<value> "
                    + "(or \(option) <value>, with a value that is not a command or an option)")
        }
        index += 1
        return "\(option)=\(next)"
    }

    /// Options start with a dash; negative numbers ("-5", "-0.5") are values.
    /// The value of an option written `--name value` (the next argument, taken) or `--name=value`.
    private static func optionValue(
        _ argument: String, _ name: String, _ arguments: [String], _ index: inout Int, missing: String
    ) throws(UsageError) -> String {
        if argument.hasPrefix(name + "=") { return String(argument.dropFirst(name.count + 1)) }
        guard index < arguments.count else { throw UsageError(message: missing) }
        defer { index += 1 }
        return arguments[index]
    }

    /// `path` with a leading `~` or `~/` read as `home`.
    private static func expandingHome(_ path: String, home: String?) -> String {
        guard let home, path == "~" || path.hasPrefix("~/") else { return path }
        return home + path.dropFirst()
    }

    private static func isOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument.count > 1 else { return false }
        return Double(argument) == nil
    }
}
