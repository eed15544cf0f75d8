// storable-config-demo: the seed article's app / twitter / facebook configs, persisted between runs, and a
// tool to look at and edit them. `storable-config-demo --help` explains the commands.
import Foundation
import StorableConfig
import StorableConfigCloud

/// Problems the library reports while the command runs; a failed write makes the command fail.
let reported = ReportedProblems()
StorableConfig.errorHandler = { error in reported.add(error) }

func exitWithMessage(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("storable-config-demo: \(message)\n".utf8))
    exit(status)
}

// Settings can be overridden for one run: APP_CONFIG_USER_NAME=x, or --app-config-user-name=x. The demo's parser
// finds those options by the names the configs give them (made in memory first), and hands the library only
// them, so that an option's value is never taken from the demo's own arguments.
let overrideOptions = Dictionary(
    NamedConfig.all(store: InMemoryStore()).flatMap { named in
        named.config.allSettings.map { setting in
            (
                ConfigOverrides.argumentName(configName: type(of: named.config).configName, name: setting.name),
                setting.valueTypeName == "Bool"
            )
        }
    }, uniquingKeysWith: { first, _ in first })

let command: DemoCommand
do {
    command = try DemoCommand.parse(
        Array(CommandLine.arguments.dropFirst()), overrideOptions: overrideOptions,
        home: ProcessInfo.processInfo.environment["HOME"])
} catch {
    exitWithMessage(error.message + " (see storable-config-demo --help)", status: 2)
}
StorableConfig.defaultOverrides = .environmentAndArguments(
    arguments: Array(CommandLine.arguments.prefix(1)) + command.overrideArguments)

// Read-only sources: --read below the store, --read-over above it; among flags of one kind a later one wins.
for path in command.readBelow + command.readAbove where !FileManager.default.fileExists(atPath: path) {
    exitWithMessage("\(path) does not exist (given to --read or --read-over)", status: 1)
}
StorableConfig.defaultSources = ConfigSources(
    aboveStore: command.readAbove.reversed().map { ConfigSource.file(atPath: $0) },
    belowStore: command.readBelow.reversed().map { ConfigSource.file(atPath: $0) })

if case .help(let topic) = command.action {
    print(topic.map(DemoHelp.command) ?? DemoHelp.general)
    exit(0)
}

do {
    let store = try DemoTool.openStore(command.store, device: command.cloud?.device)
    var cloudSync: CloudSync?
    if let cloud = command.cloud { cloudSync = try DemoTool.cloudSync(cloud, over: store) }
    var tool = DemoTool(store: store, cloudSync: cloudSync)
    tool.writeFailure = { reported.firstWriteFailure }
    try tool.run(command.action)
    if let failure = reported.firstWriteFailure {
        exitWithMessage(tool.message(for: failure), status: 1)
    }
} catch {
    exitWithMessage(error.message, status: error.usage ? 2 : 1)
}
