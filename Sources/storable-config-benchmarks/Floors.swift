// The floors that the targets are ratios against: the least that an assignment, a durable write and a first
// instance could cost, written by hand.
import Foundation
import StorableConfig
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The least an in-memory assignment with change tracking can cost: one key of a `[String: Int]` behind a
/// `Mutex`, plus a version increment in the same critical section.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class MutexDictionaryFloor: Sendable {
    private let state = Mutex<(values: [String: Int], version: UInt64)>(([:], 0))

    @inline(never)
    func write(_ value: Int, forKey key: String) {
        state.withLock { state in
            state.values[key] = value
            state.version &+= 1
        }
    }
}

/// The least a durable write of a settings file can cost: the same bytes to a temporary file in the same
/// directory, `fdatasync`, `rename` over the file, `fsync` of the directory.
struct DurableWriteFloor {
    let path: String
    let texts: [Data]

    /// Takes the file's current text and makes variants that differ in one value, as an assignment would.
    init(copying path: String, key: String) {
        self.path = path + ".floor"
        let text = String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self)
        precondition(text.contains("\"\(key)\": 0,"), "the file does not hold \(key) = 0")
        texts = (0..<8).map { variant in
            Data(text.replacingOccurrences(of: "\"\(key)\": 0,", with: "\"\(key)\": \(variant),").utf8)
        }
    }

    @inline(never)
    func replaceFile(_ index: Int) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = path + ".tmp"
        let data = texts[index & 7]
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(descriptor >= 0)
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #if canImport(Darwin)
            _ = fcntl(descriptor, F_FULLFSYNC)
        #else
            _ = fdatasync(descriptor)
        #endif
        close(descriptor)
        precondition(rename(temporary, path) == 0)
        let directoryDescriptor = open(directory, O_RDONLY | O_CLOEXEC)
        _ = fsync(directoryDescriptor)
        close(directoryDescriptor)
    }
}

/// The first instance of each of seven 100-setting classes that this process has not created yet, over
/// UserDefaults, in nanoseconds: a first instance can only be measured once per class.
func warmFirstInstances(_ store: UserDefaultsStore) -> [Double] {
    let makers: [() -> AnyObject] = [
        { WarmConfigA(store: store) }, { WarmConfigB(store: store) }, { WarmConfigC(store: store) },
        { WarmConfigD(store: store) }, { WarmConfigE(store: store) }, { WarmConfigF(store: store) },
        { WarmConfigG(store: store) },
    ]
    return makers.map { make in
        let start = now()
        consume(make())
        return Double(now() - start)
    }
}
