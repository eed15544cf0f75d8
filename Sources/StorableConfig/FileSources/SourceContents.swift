import Foundation

/// What a file source held when it was last read: its values by name, and what could not be used.
struct SourceContents: Sendable {
    /// One value and where it is.
    struct Entry: Sendable {
        let value: CandidateValue
        /// `file /etc/app/config/SERVER_CONFIG_PORT`, `.env file /srv/.env line 3`.
        let origin: String
        /// For a settings document's value, the schema version of the config it belongs to.
        var schemaVersion: Int?
    }

    /// By name: an environment variable's name or a key (a directory), a variable's name (a `.env` file), a key (a
    /// JSON file).
    var entries: [String: Entry] = [:]
    /// A settings document's values, by `<namespace>.<configName>.<property name>` (not by key: a setting with an
    /// explicit key is still named by its property in a document).
    var documentEntries: [String: Entry] = [:]
    /// What could not be used, each reported once for these contents.
    var problems: [StorableConfigError] = []
    /// The bytes read, by file: two readings with the same fingerprint hold the same values.
    var fingerprint: [String: Data] = [:]
    /// Whether the file or directory was there.
    var exists = false

    /// The largest file read: a value is a line or a small document, and a source is not a place for a disk image.
    static let largestFile = 16 * 1024 * 1024

    /// Reads `source` now. Never throws: what cannot be read is a problem in the result.
    static func read(_ source: ConfigSource) -> SourceContents {
        var contents = SourceContents()
        var info = stat()
        guard stat(source.path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            if errno == ENOENT || errno == ENOTDIR {
                if !source.isOptional {
                    contents.problems.append(
                        .sourceUnusable(
                            where: source.description,
                            reason: "it does not exist (declare the source optional if it may be missing)"))
                }
            } else {
                contents.problems.append(.sourceUnusable(where: source.description, reason: reason))
            }
            return contents
        }
        contents.exists = true
        switch source.format {
        case .directory:
            guard info.st_mode & S_IFMT == S_IFDIR else {
                contents.problems.append(.sourceUnusable(where: source.description, reason: "it is not a directory"))
                return contents
            }
            contents.readDirectory(source)
        case .dotEnv:
            guard let data = contents.readFile(source.path, source: source) else { return contents }
            contents.readDotEnv(data, source: source)
        case .json:
            guard let data = contents.readFile(source.path, source: source) else { return contents }
            contents.readJSON(data, source: source)
        }
        return contents
    }

    /// The bytes of the file at `path`, or `nil` with a problem. Opened without blocking and checked on the open
    /// descriptor, so that a FIFO or a device put where a file was expected never holds the reading thread.
    private mutating func readFile(_ path: String, source: ConfigSource) -> Data? {
        let place = path == source.path ? source.description : "file \(path)"
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            problems.append(.sourceUnusable(where: place, reason: String(cString: strerror(errno))))
            return nil
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            problems.append(.sourceUnusable(where: place, reason: "it is not a regular file"))
            return nil
        }
        guard info.st_size <= Self.largestFile else {
            problems.append(
                .sourceUnusable(where: place, reason: "it holds \(info.st_size) bytes, more than \(Self.largestFile)"))
            return nil
        }
        do {
            // At most one byte more than the limit: a file that grew since `fstat` is refused, not read whole.
            let data = try handle.read(upToCount: Self.largestFile + 1) ?? Data()
            guard data.count <= Self.largestFile else {
                problems.append(.sourceUnusable(where: place, reason: "it holds more than \(Self.largestFile) bytes"))
                return nil
            }
            fingerprint[path] = data
            return data
        } catch {
            problems.append(.sourceUnusable(where: place, reason: "it cannot be read (\(error.localizedDescription))"))
            return nil
        }
    }

    /// One file per value, named by the value's name; the kubelet's own entries (`..data`, `..2026_…`) skipped,
    /// and so are directories.
    private mutating func readDirectory(_ source: ConfigSource) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: source.path)
        } catch {
            problems.append(.sourceUnusable(where: source.description, reason: "it cannot be listed (\(error))"))
            return
        }
        for name in names.sorted() where !name.hasPrefix("..") {
            let path = source.path.hasSuffix("/") ? source.path + name : source.path + "/" + name
            var info = stat()
            // A dangling link (the kubelet between two steps of a swap) or a subdirectory holds no value.
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            guard let data = readFile(path, source: source) else { continue }
            guard var text = String(data: data, encoding: .utf8) else {
                problems.append(.sourceUnusable(where: "file \(path)", reason: "it is not UTF-8 text"))
                continue
            }
            // One line end that editors and `kubectl create configmap --from-file` leave.
            if text.utf8.last == UInt8(ascii: "\n") {
                text.removeLast()  // "\r\n" is one Character: removed whole.
            }
            entries[name] = Entry(value: .text(text), origin: "file \(path)")
        }
    }

    /// `NAME=value` lines; a variable set in the process's real environment beats the file's line.
    private mutating func readDotEnv(_ data: Data, source: ConfigSource) {
        let file = DotEnvFile(parsing: data)
        for problem in file.problems {
            problems.append(.sourceUnusable(where: "\(source.path):\(problem.line)", reason: problem.reason))
        }
        let environment = ProcessInfo.processInfo.environment
        for (name, entry) in file.values {
            if let real = environment[name] {
                entries[name] = Entry(value: .text(real), origin: "environment variable \(name)")
            } else {
                entries[name] = Entry(value: .text(entry.value), origin: ".env file \(source.path) line \(entry.line)")
            }
        }
    }

    /// A settings document (known by its `"format"` member) or a settings file of keys and values.
    private mutating func readJSON(_ data: Data, source: ConfigSource) {
        let parsed: StoredValue
        do {
            parsed = try JSONText.parse(data)
        } catch {
            problems.append(.sourceUnusable(where: source.description, reason: "it is not JSON (\(error))"))
            return
        }
        guard case .dictionary(let members) = parsed else {
            problems.append(
                .sourceUnusable(where: source.description, reason: "it is \(parsed.kindDescription), not an object"))
            return
        }
        let origin = "JSON file \(source.path)"
        guard members["format"] != nil else {
            for (key, value) in members where !key.hasSuffix(".@schemaVersion") {
                entries[key] = Entry(value: .stored(value), origin: origin)
            }
            return
        }
        let document: ConfigDocument
        do {
            document = try ConfigDocument(jsonText: String(decoding: data, as: UTF8.self))
        } catch {
            problems.append(.sourceUnusable(where: source.description, reason: "\(error)"))
            return
        }
        for (configName, config) in document.configs {
            for (name, value) in config.settings {
                documentEntries["\(config.namespace).\(configName).\(name)"] = Entry(
                    value: .stored(value), origin: origin, schemaVersion: config.schemaVersion)
            }
        }
    }
}
