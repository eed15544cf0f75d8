import Foundation

extension SourceContents {
    /// Reads the managed app configuration of `defaults` now: each member of its dictionary by its name, and where
    /// the platform forces values (macOS; corelibs Foundation answers and forces nothing), the forced value of each
    /// key in `names` that the dictionary does not give. Never throws: what cannot be used is a problem.
    static func readManaged(from defaults: UserDefaults, names: Set<String>) -> SourceContents {
        var contents = SourceContents()
        let place = "managed app configuration"
        func add(_ name: String, _ object: Any, origin: String) {
            guard let value = UserDefaultsStore.storedValue(from: object) else {
                contents.problems.append(
                    .sourceUnusable(
                        where: place,
                        reason: "its key \(name) holds \(type(of: object)), which is not a property-list value"
                    ))
                return
            }
            let entry = Entry(value: .stored(value), origin: origin, file: name)
            contents.entries[name] = entry
            contents.fingerprint[name] = Data((origin + "\n" + entry.value.text).utf8)
        }
        if let object = defaults.object(forKey: ManagedDefaults.key) {
            contents.exists = true
            if let dictionary = object as? [String: Any] {
                for (name, member) in dictionary {
                    add(name, member, origin: "managed app configuration key \(name)")
                }
            } else {
                contents.problems.append(
                    .sourceUnusable(
                        where: place,
                        reason:
                            "\(ManagedDefaults.key) holds \(type(of: object)) rather than a dictionary; none of it is read"
                    ))
            }
        }
        #if os(macOS) || !canImport(Darwin)
            for name in names.sorted() where contents.entries[name] == nil && defaults.objectIsForced(forKey: name) {
                guard let object = defaults.object(forKey: name) else { continue }
                add(name, object, origin: "managed preference \(name) (forced by a configuration profile)")
            }
        #endif
        return contents
    }
}
