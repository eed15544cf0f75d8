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
        /// The file that gave it: the source's own path, or a file of a directory.
        let file: String
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
    /// For a directory, its path: its names are listed when they are asked for (``listedNames``), not when it is
    /// read.
    private var directory: String?
    /// What is there but could not be read (the source itself, or a file of a directory): its path, the place
    /// to name, and why. Turned into problems by `read(_:names:keepingFrom:)`, which keeps the values it gave
    /// before.
    private var unreadable: [(path: String, place: String, reason: String)] = []
    /// The bytes read so far from the source's files.
    private var bytesRead = 0
    /// Whether what the source leads to went away while it was read (the kubelet's swap of `..data` removes the
    /// directory it led to): the reading starts again.
    private var vanished = false

    /// The most bytes read from one source, all its files together: a value is a line or a small document, and
    /// a source is not a place for a disk image. A file that would take a source past it is not read (reported,
    /// naming the file and the limit); the values it gave before are kept, and so is every file read before it.
    static let readLimit = 16 * 1024 * 1024

    /// How many times a reading starts again when what it reads is swapped away under it, before it keeps the
    /// values read before.
    private static let attempts = 50

    /// The names the source gives, read or not: for a directory every name in it now but the kubelet's entries
    /// (`..data`, `..2026_…`) and subdirectories, listed at each call (what ``StorableConfig/checkOverrides(of:)``
    /// checks for typos); for a `.env` or JSON file the names of its values.
    var listedNames: [String] {
        guard let directory else { return Array(entries.keys) }
        return (Self.names(inDirectory: directory) ?? Array(entries.keys)).filter {
            !$0.hasPrefix("..")
        }
    }

    /// Reads `source` now. Never throws: what cannot be read is a problem in the result.
    ///
    /// In a directory, only the files named in `names` are read (`nil`: every file); the others are listed.
    /// Files that are links through the kubelet's `..data` are read through the one directory that `..data`
    /// led to when the reading began, so that they are of one generation; when that directory is removed while
    /// they are read (the kubelet swapped the volume), the reading starts again.
    ///
    /// A file that is there but cannot be read (its permissions, its directory's, an I/O error, a FIFO or a
    /// directory in its place, past ``readLimit``) keeps the values it gave in `old`, the source's last reading,
    /// until it can be read again, and the problem says so: a live source that gave a value keeps it, as it keeps
    /// its last valid value when it gives an invalid one. A file that is gone, or whose content cannot be used,
    /// gives nothing.
    static func read(
        _ source: ConfigSource, names: Set<String>? = nil, keepingFrom old: SourceContents? = nil
    ) -> SourceContents {
        if source.format == .managedAppConfiguration {
            return readManaged(from: source.managedDefaults?.defaults ?? .standard, names: names ?? [])
        }
        if source.format == .provider {
            guard let provider = source.provider else {
                var contents = SourceContents()
                contents.problems.append(
                    .sourceUnusable(
                        where: source.description,
                        reason: "it names no provider: make a provider's source with ConfigSource.provider(_:secret:)"))
                return contents
            }
            return readProvider(provider.provider, keepingFrom: old)
        }
        var contents = readNow(source, names: names, attempt: 0)
        for attempt in 1..<attempts where contents.vanished {
            contents = readNow(source, names: names, attempt: attempt)
        }
        if contents.vanished {
            contents = SourceContents()
            contents.unreadable.append(
                (source.path, source.description, "it was replaced while it was read, \(attempts) times in a row"))
        }
        for failure in contents.unreadable {
            let kept = old.map { contents.keep(valuesFrom: failure.path, of: $0) } ?? false
            contents.problems.append(
                .sourceUnusable(
                    where: failure.place,
                    reason: failure.reason
                        + (kept ? "; the values it gave before are kept until it can be read again" : "")))
        }
        contents.unreadable = []
        return contents
    }

    /// Takes from `old` the values that `path` (a file, or a directory and every file in it) gave, where this
    /// reading has none, and the bytes they were read from; returns whether any value was taken.
    private mutating func keep(valuesFrom path: String, of old: SourceContents) -> Bool {
        let inside = path.hasSuffix("/") ? path : path + "/"
        func isFrom(_ file: String) -> Bool { file == path || file.hasPrefix(inside) }
        let kept = old.entries.filter { isFrom($0.value.file) && entries[$0.key] == nil }
        let keptInDocument = old.documentEntries.filter { isFrom($0.value.file) && documentEntries[$0.key] == nil }
        entries.merge(kept) { current, _ in current }
        documentEntries.merge(keptInDocument) { current, _ in current }
        // The same bytes as before: the kept values are those bytes' values, and nothing changed in the file.
        fingerprint.merge(old.fingerprint.filter { isFrom($0.key) }) { current, _ in current }
        exists = exists || old.exists
        return !kept.isEmpty || !keptInDocument.isEmpty
    }

    private static func readNow(_ source: ConfigSource, names: Set<String>?, attempt: Int) -> SourceContents {
        var contents = SourceContents()
        var info = stat()
        guard stat(source.path, &info) == 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            // A link whose end is gone may be between two steps of a swap (`config.json -> ..data/config.json`, its
            // `..data` found the moment before its directory was deleted): looked at again, a few times.
            var link = stat()
            if code == ENOENT, attempt < 3, lstat(source.path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
                contents.vanished = true
                return contents
            }
            if code != ENOENT && code != ENOTDIR {
                contents.unreadable.append((source.path, source.description, "it cannot be reached (\(reason))"))
            } else if !source.isOptional {
                contents.problems.append(
                    .sourceUnusable(
                        where: source.description,
                        reason: "it does not exist (declare the source optional if it may be missing)"))
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
            contents.readDirectory(source, names: names)
        case .dotEnv:
            guard let data = contents.readFile(source.path, source: source) else { return contents }
            contents.readDotEnv(data, source: source)
        case .json:
            guard let data = contents.readFile(source.path, source: source) else { return contents }
            contents.readJSON(data, source: source)
        case .managedAppConfiguration, .provider:
            break  // Read by `readManaged(from:names:)` and `readProvider(_:keepingFrom:)`, never from a file.
        }
        return contents
    }

    /// The bytes of the file at `path` (read at `readPath`, its place in the generation being read), or `nil`
    /// with a problem. Opened without blocking and checked on the open descriptor, so that a FIFO or a device put
    /// where a file was expected never holds the reading thread. The source's own file gone (found a moment
    /// before) went away in a swap: the reading starts again.
    private mutating func readFile(_ path: String, at readPath: String? = nil, source: ConfigSource) -> Data? {
        let isSource = path == source.path
        let place = isSource ? source.description : "file \(path)"
        let descriptor = open(readPath ?? path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            if code != ENOENT {
                unreadable.append((path, place, "it cannot be read (\(reason))"))
            } else if isSource {
                vanished = true
            } else {
                problems.append(.sourceUnusable(where: place, reason: reason))
            }
            return nil
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            unreadable.append((path, place, "it is not a regular file"))
            return nil
        }
        let limit = Self.readLimit - bytesRead
        func pastTheLimit(_ size: String) {
            let before = bytesRead == 0 ? "" : ", and with the \(bytesRead) bytes read before it from this source,"
            let reason = "it holds \(size) bytes\(before) more than the \(Self.readLimit) bytes (16 MiB) read at most"
            unreadable.append((path, place, reason + " from one source"))
        }
        guard info.st_size <= limit else {
            pastTheLimit("\(info.st_size)")
            return nil
        }
        // Not read past the limit: a file that grew since `fstat` is refused, not read whole.
        let data: Data
        do {
            data = try FileSystem.readToEnd(of: descriptor, path: path, limit: limit)
        } catch {
            unreadable.append((path, place, "it cannot be read (\(error))"))
            return nil
        }
        guard data.count <= limit else {
            pastTheLimit("more than \(limit)")
            return nil
        }
        bytesRead += data.count
        fingerprint[path] = data
        return data
    }

    /// The names in the directory at `path` but `.`, `..` and subdirectories; `nil` when it cannot be listed, with
    /// the system's reason in `errno` (FileManager's error prints as `NSCocoaErrorDomain Code=257 …`).
    private static func names(inDirectory path: String) -> [String]? {
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            // Told by the listing itself, without a `stat` per entry.
            if entry.pointee.d_type == UInt8(DT_DIR) { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// One file per value, named by the value's name; only the files named in `wanted` are read (`nil`: all),
    /// the kubelet's own entries (`..data`, `..2026_…`) and directories skipped.
    ///
    /// The kubelet's files are links `name -> ..data/name`, and `..data` a link to the generation's directory,
    /// swapped by a rename: `..data` is read once, and each such file is read in the directory it led to, so that
    /// every value is of one generation. A file absent from that directory is not in that generation, unless
    /// `..data` leads elsewhere by then: a swap is removing it, and the reading starts again (`vanished`).
    private mutating func readDirectory(_ source: ConfigSource, names wanted: Set<String>?) {
        let dataLink = FileSystem.joined(source.path, "..data")
        let target = FileSystem.linkText(ofPath: dataLink)
        let generation = target.flatMap { $0.contains("/") ? nil : FileSystem.joined(source.path, $0) }
        directory = source.path
        let toRead: [String]? =
            if let wanted {
                // Looked up by name: a directory of 100,000 other files is not listed at each reading.
                access(source.path, R_OK | X_OK) == 0 ? wanted.filter { !$0.contains("/") } : nil
            } else {
                Self.names(inDirectory: source.path)
            }
        guard let toRead else {
            let reason = String(cString: strerror(errno))
            unreadable.append((source.path, source.description, "it cannot be listed (\(reason))"))
            return
        }
        for name in toRead.sorted() where !name.hasPrefix("..") {
            let path = FileSystem.joined(source.path, name)
            var readPath = path
            if let generation, let link = FileSystem.linkText(ofPath: path), link.hasPrefix("..data/") {
                readPath = FileSystem.joined(generation, String(link.dropFirst("..data/".count)))
            }
            /// Whether the generation being read was swapped away (`..data` leads elsewhere now: the kubelet removes
            /// the old directory file by file, so a file missing there says nothing until `..data` is looked at).
            func generationIsGone() -> Bool {
                readPath != path && FileSystem.linkText(ofPath: dataLink) != target
            }
            var info = stat()
            guard stat(readPath, &info) == 0 else {
                // A directory that may be listed but not entered: the file is there, and cannot be read.
                let code = errno
                if code == EACCES || code == EPERM || code == EIO {
                    unreadable.append((path, "file \(path)", "it cannot be read (\(String(cString: strerror(code))))"))
                } else if generationIsGone() {
                    vanished = true
                    return
                }
                // Else a dangling link (a name not in this generation, or the kubelet between two steps of a swap)
                // or a loop: no value.
                continue
            }
            // A subdirectory holds no value.
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            guard let data = readFile(path, at: readPath, source: source) else {
                if generationIsGone() {
                    vanished = true
                    return
                }
                continue
            }
            guard var text = String(data: data, encoding: .utf8) else {
                problems.append(.sourceUnusable(where: "file \(path)", reason: "it is not UTF-8 text"))
                continue
            }
            // One line end that editors and `kubectl create configmap --from-file` leave.
            if text.utf8.last == UInt8(ascii: "\n") {
                text.removeLast()  // "\r\n" is one Character: removed whole.
            }
            entries[name] = Entry(value: .text(text), origin: "file \(path)", file: path)
        }
    }

    /// `NAME=value` lines; a variable set in the process's real environment beats the file's line.
    private mutating func readDotEnv(_ data: Data, source: ConfigSource) {
        let file = DotEnvFile(parsing: data)
        problems += file.problems.map { .sourceUnusable(where: "\(source.path):\($0.line)", reason: $0.reason) }
        let environment = ProcessInfo.processInfo.environment
        for (name, entry) in file.values {
            let real = environment[name]
            let origin = real == nil ? ".env file \(source.path) line \(entry.line)" : "environment variable \(name)"
            entries[name] = Entry(value: .text(real ?? entry.value), origin: origin, file: source.path)
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
                entries[key] = Entry(value: .stored(value), origin: origin, file: source.path)
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
                    value: .stored(value), origin: origin, schemaVersion: config.schemaVersion, file: source.path)
            }
        }
    }
}
