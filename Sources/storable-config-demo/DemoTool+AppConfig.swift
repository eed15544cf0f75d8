import Foundation
import StorableConfig
import StorableConfigSchema

/// `appconfig-spec`: the AppConfig specification file of the demo's configs, for an MDM console.
extension DemoTool {
    /// Prints the specification file of the named configs, or of all; says on standard error which settings it
    /// leaves out, and why.
    func printAppConfigSpecification(_ names: [String], bundleIdentifier: String) throws(Failure) {
        let specification = AppConfigSpecification(
            of: try configs(named: names), bundleIdentifier: bundleIdentifier)
        print(specification.xmlText, terminator: "")
        for omitted in specification.omittedSettings {
            FileHandle.standardError.write(Data("left out of the specification: \(omitted)\n".utf8))
        }
    }

    /// The configs that `names` name (`app`, `twitter`), in that order, or all of them when `names` is empty.
    /// - Throws: A usage failure naming the first name that is not a config's.
    func configs(named names: [String]) throws(Failure) -> [StorableConfig] {
        guard !names.isEmpty else { return configs.map(\.config) }
        var chosen: [StorableConfig] = []
        for name in names {
            guard let named = configs.first(where: { $0.name == name }) else {
                throw Failure(
                    message: "unknown config '\(name)'; configs are \(configs.map(\.name).joined(separator: ", "))",
                    usage: true)
            }
            chosen.append(named.config)
        }
        return chosen
    }
}
