import Foundation
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// FileSecretStore's files and directory: their modes, the directories it refuses, symbolic links, hostile keys.
struct FileSecretStoreTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode & (S_IFMT | 0o7777)
    }

    static func expectUnavailable(_ error: StorableConfigError, naming path: String, saying text: String) {
        guard case .secretStoreUnavailable = error else {
            Issue.record("expected secretStoreUnavailable, got \(error)")
            return
        }
        #expect(error.description.contains(path))
        #expect(error.description.contains(text), "\(error)")
    }

    @Test(arguments: ["0", "277", "022"])
    func filesAre0600AndTheDirectory0700WhateverTheUmask(umask: String) throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets").path
        // umask is the process's: set it in a child, not here where other tests create files.
        let stress = try builtProduct("storable-config-stress").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask \(umask) && exec \"$0\" add-secret \"$1\" key value", stress, directory]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(Self.mode(directory) == S_IFDIR | 0o700)
        let file = directory + "/key"
        #expect(Self.mode(file) == S_IFREG | 0o600)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "value")
    }

    @Test(arguments: [0o750, 0o705, 0o710, 0o701, 0o777])
    func aDirectoryOthersMayUseIsRefusedAndLeftAsItIs(mode: Int) throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        chmod(directory.path, mode_t(mode))
        let error = try #require(throws: StorableConfigError.self) { try FileSecretStore(directory: directory) }
        Self.expectUnavailable(error, naming: directory.path, saying: "chmod 700")
        #expect(Self.mode(directory.path) == S_IFDIR | mode_t(mode), "the directory's mode was changed")
    }

    @Test func aDirectoryMadePublicLaterIsRefusedAtTheNextCall() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        let store = try FileSecretStore(directory: directory)
        try store.setSecret(Data("hunter2".utf8), forKey: "token")
        chmod(directory.path, 0o755)
        let error = try #require(throws: StorableConfigError.self) { try store.secret(forKey: "token") }
        Self.expectUnavailable(error, naming: directory.path, saying: "755")
        #expect(!error.description.contains("hunter2"))
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a directory to another user"))
    func aDirectoryOfAnotherUserIsRefused() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        chmod(directory.path, 0o700)
        chown(directory.path, 65534, 65534)
        let error = try #require(throws: StorableConfigError.self) { try FileSecretStore(directory: directory) }
        Self.expectUnavailable(error, naming: directory.path, saying: "65534")
        var info = stat()
        stat(directory.path, &info)
        #expect(info.st_uid == 65534, "the directory's owner was changed")
    }

    @Test func aMissingParentIsAnUnavailableStore() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("missing/secrets")
        let error = try #require(throws: StorableConfigError.self) { try FileSecretStore(directory: directory) }
        Self.expectUnavailable(error, naming: directory.path, saying: "parent")
        #expect(!FileManager.default.fileExists(atPath: parent.file("missing").path))
    }

    @Test func aSecretFileThatIsASymbolicLinkIsNeverFollowed() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        let store = try FileSecretStore(directory: directory)
        let outside = parent.file("outside")
        try "outside".write(to: outside, atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("k.token").path
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: outside.path)
        for (call, attempt) in SecretStoreTests.everyCall(store, data: Data("hunter2".utf8)).dropLast().enumerated() {
            let error = try #require(throws: StorableConfigError.self, "call \(call)") { try attempt() }
            #expect(error.description.contains(file) && error.description.contains("symbolic link"), "\(error)")
            #expect(!error.description.contains("hunter2"))
        }
        #expect(try String(contentsOf: outside, encoding: .utf8) == "outside", "the link's target was written")
        #expect(Self.mode(file) & S_IFMT == S_IFLNK, "the link was replaced")
    }

    @Test func aDirectoryPathThatIsALinkIsFollowedWhenItsTargetIsPrivate() throws {
        let parent = TemporaryDirectory()
        let target = parent.file("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        chmod(target.path, 0o700)
        let link = parent.file("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let store = try FileSecretStore(directory: link)
        try store.setSecret(Data("1".utf8), forKey: "k")
        #expect(FileManager.default.contents(atPath: target.appendingPathComponent("k").path) == Data("1".utf8))
        chmod(target.path, 0o755)
        let error = try #require(throws: StorableConfigError.self) { try FileSecretStore(directory: link) }
        Self.expectUnavailable(error, naming: link.path, saying: "chmod 700")
    }

    @Test func openingTheStoreRemovesTheTemporaryFilesOfGoneProcessesOnly() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        _ = try FileSecretStore(directory: directory)
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let stale = ".secret.\(gone.processIdentifier).1.tmp"
        let live = ".secret.\(getpid()).999999.tmp"
        let other = ".secret.notes"
        for name in [stale, live, other] {
            try Data("x".utf8).write(to: directory.appendingPathComponent(name))
        }
        _ = try FileSecretStore(directory: directory)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(names == [live, other], "a live writer's file or another file was removed, or a stale one kept")
    }

    @Test func aFailedWriteNamesTheKeyAndTheFileButNotTheSecret() throws {
        let parent = TemporaryDirectory()
        let store = try FileSecretStore(directory: parent.file("secrets"))
        // A directory where the secret's file should be: the rename fails.
        try FileManager.default.createDirectory(at: parent.file("secrets/token/x"), withIntermediateDirectories: true)
        let error = try #require(throws: StorableConfigError.self) {
            try store.setSecret(Data("hunter2".utf8), forKey: "token")
        }
        #expect(error.key == "token")
        #expect(error.description.contains(parent.file("secrets/token").path))
        #expect(!error.description.contains("hunter2"))
        let names = try FileManager.default.contentsOfDirectory(atPath: parent.file("secrets").path)
        #expect(names == ["token"], "a temporary file was left: \(names)")
    }

    @Test func hostileKeysEachGetAFileOfTheirOwnInsideTheDirectory() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        let store = try FileSecretStore(directory: directory)
        var random = SplitMix64(seed: 34)
        let alphabet = Array("/.%^~Aa é\u{301}🎌\u{202E}\t\\:*?\"<>|\u{FFFF}")
        var keys = [
            "", ".", "..", "/", "../x", "./..", "/etc/passwd", String(repeating: "/", count: 300),
            String(repeating: "x", count: 10_000), String(repeating: "x", count: 10_000) + "y", "%", "^a", "A",
        ]
        while keys.count < 1000 {
            let length = Int.random(in: 1...400, using: &random)
            keys.append(String((0..<length).map { _ in alphabet.randomElement(using: &random)! }))
        }
        keys = Array(Set(keys))
        for (index, key) in keys.enumerated() { try store.setSecret(Data("\(index)".utf8), forKey: key) }
        for (index, key) in keys.enumerated() {
            #expect(try store.secret(forKey: key) == Data("\(index)".utf8), "\(key.debugDescription.prefix(60))")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count == keys.count, "two keys share a file, or a file is elsewhere")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.url.path) == ["secrets"])
        for name in names {
            #expect(name.utf8.count <= 255 && !name.hasPrefix("."))
            #expect(Self.mode(directory.appendingPathComponent(name).path) == S_IFREG | 0o600)
        }
    }

    @Test func theDigestOfLongKeysIsSHA256() {
        #expect(SHA256.hexDigest(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hexDigest(of: "abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexDigest(of: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hexDigest(of: Array(repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
