// storable-config-demo: the seed article's app / twitter / facebook configs, persisted between runs, and a
// tool to look at and edit them. `storable-config-demo --help` explains the commands.
import Foundation
import StorableConfig

/// Problems the library reports while the command runs; a failed write makes the command fail.
let reported = ReportedProblems()
StorableConfig.errorHandler = { error in reported.add(error) }

func exitWithMessage(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("storable-config-demo: \(message)\n".utf8))
    exit(status)
}

// Settings can be overridden for one run: APP_CONFIG_USER_NAME=x, or --app-config-user-name=x. Those arguments are
// taken out before the demo's own parser sees the rest (the names come from the configs, made in memory first).
let ownArguments = ConfigOverrides.removingSettingArguments(
    from: Array(CommandLine.arguments.dropFirst()), of: NamedConfig.all(store: InMemoryStore()).map(\.config))
StorableConfig.defaultOverrides = .environmentAndArguments()

let command: DemoCommand
do {
    command = try DemoCommand.parse(ownArguments)
} catch {
    exitWithMessage(error.message + " (see storable-config-demo --help)", status: 2)
}

if case .help(let topic) = command.action {
    print(topic.map(DemoHelp.command) ?? DemoHelp.general)
    exit(0)
}

do {
    let store = try DemoTool.openStore(path: command.storePath)
    var tool = DemoTool(store: store)
    tool.writeFailed = { reported.firstWriteFailure != nil }
    try tool.run(command.action)
} catch {
    exitWithMessage(error.message, status: error.usage ? 2 : 1)
}
if let failure = reported.firstWriteFailure {
    exitWithMessage(failure.description, status: 1)
}
