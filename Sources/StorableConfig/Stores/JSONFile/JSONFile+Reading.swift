import Foundation

/// Reading the file: what changed on disk since the last read or write, with this process's unwritten changes laid
/// on top.
extension JSONFile {
    /// What to do with a file that does not parse.
    enum CorruptFileAction {
        /// Move it aside, report it, and go on from the values last known.
        case quarantine
        /// Leave it and keep the values last known: it may be half written by someone else.
        case keep
        /// Throw, leaving it in place.
        case fail
    }

    /// Runs `body` holding the side file's lock of `destination`, after finishing a rewrite in place that a crash
    /// cut short (see ``FileSystem/replaceFile(at:with:permissions:)``): when the copy of the new contents is beside
    /// the file and the file does not hold a JSON object (it was torn), puts the copy's contents in the file. The
    /// copy is removed either way: a file that parses was rewritten whole, or not yet touched, or written by someone
    /// since, and is kept. One failed `open` when there is no copy.
    func underLock<Result>(of destination: FileSystem.Destination, _ body: () throws -> Result) throws -> Result {
        try FileSystem.withExclusiveLock(on: destination) {
            if let copy = try? FileSystem.contents(ofPath: destination.rewriteCopy) {
                if let current = try? FileSystem.contents(ofPath: destination.path),
                    (try? JSONText.parseObject(current)) == nil
                {
                    _ = try FileSystem.overwrite(atPath: destination.path, with: copy)
                }
                unlink(destination.rewriteCopy)
            }
            return try body()
        }
    }

    /// ``readFromDisk(at:ifCorrupt:holdingLock:)`` run ``underLock(of:_:)``: for a file that did not parse when
    /// read without the lock, which may have been a file that is a mount point, read while another process rewrote
    /// it in place.
    private func readFromDiskUnderLock(at target: String?, ifCorrupt action: CorruptFileAction) throws
        -> FileSystem.Kind
    {
        let destination = try destination(at: target ?? FileSystem.endOfLinks(from: path))
        do {
            return try underLock(of: destination) {
                try readFromDisk(at: target, ifCorrupt: action, holdingLock: true)
            }
        } catch let failure as FileSystem.Failure where failure.path == destination.lockPath {
            // No lock to be had (a directory or a lock file this process may not write): decide on the file as
            // it is, as a reader did before reads took the lock, so that the reason given is the file's.
            return try readFromDisk(at: target, ifCorrupt: action, holdingLock: true)
        }
    }

    /// Reads the file if it changed since it was last read or written, then lays the unwritten changes on
    /// top. Called with `lock` held. A file that does not parse is read again under the side file's lock before it
    /// is moved aside or refused, unless `holdingLock` says that lock is held already.
    /// - Parameter target: Where `path` leads, if known: the end of its symbolic links, or `path` itself.
    /// - Returns: What the one `stat` of the path found.
    func readFromDisk(
        at target: String? = nil, ifCorrupt action: CorruptFileAction = .quarantine, holdingLock: Bool = false
    ) throws -> FileSystem.Kind {
        let previous = values
        let previousRespellings = respellings
        defer { noteExternalChanges(from: previous, previousRespellings) }
        let kind = try FileSystem.kind(ofPath: target ?? path)
        var quarantined = false
        switch kind {
        case .file(let current, _) where current == stamp:
            return kind
        case .missing:
            forgetContents()
        case .file(let current, _):
            guard let data = try FileSystem.contents(ofPath: target ?? path) else {
                forgetContents()
                break
            }
            do {
                let parsed = try JSONText.parseObject(data)
                (values, rawMembers) = (parsed.members, parsed.rawMembers)
                respellings = [:]
                for member in parsed.respelledMembers {
                    respellings[ExactKey(member.key)] = FileText.Respelling(value: member.value, raw: member.raw)
                }
                stamp = current
            } catch let error as JSONText.SyntaxError {
                if !holdingLock, action != .keep {
                    return try readFromDiskUnderLock(at: target, ifCorrupt: action)
                }
                let reason = data.isEmpty ? "the file is empty" : error.description
                switch action {
                case .quarantine:
                    // The bytes of the file the path leads to are moved aside; a symbolic link stays as it is.
                    let movedTo = try FileSystem.quarantine(path: target ?? FileSystem.endOfLinks(from: path) ?? path)
                    StorableConfig.report(.corruptFileQuarantined(path: path, movedTo: movedTo, reason: reason))
                    quarantined = true
                case .keep:
                    break
                case .fail:
                    throw FileSystem.Failure(
                        path: path, reason: "it is not valid JSON (\(reason)); repair or remove it")
                }
                // Keep what this process last knew; the next write puts it back on disk, the next read retries.
                stamp = nil
            }
        case .directory:
            throw FileSystem.Failure(path: path, reason: "it is a directory; give the path of a file")
        case .other:
            // Not opened: a FIFO would wait for a writer.
            throw FileSystem.Failure(path: path, reason: "it is not a regular file")
        }
        for (key, value) in unwritten {
            setStoredValue(value, forKey: key)
        }
        for (key, value) in unwrittenRespellings {
            setStoredValue(value, forKey: key.string)
        }
        return quarantined ? .missing : kind
    }

    /// What a file that is gone holds. Called with `lock` held.
    private func forgetContents() {
        stamp = nil
        values = [:]
        respellings = [:]
        rawMembers = [:]
    }
}
