#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The settings created on this thread since a config last started, so that a config can find its settings
/// without `Mirror`.
///
/// A subclass's property initializers create its `Setting`s, on the thread that creates the config, just
/// before `StorableConfig.init` runs. Reflecting costs microseconds per setting; taking this list costs
/// nanoseconds. The first instance of a class is reflected all the same, and the list is trusted for later
/// instances only if, for that first instance, it held exactly the settings `Mirror` found, in an order that
/// is then recorded. Anything else (a `Setting` made outside a config, a config created inside another's
/// property initializer) changes the count, and the config falls back to `Mirror`.
enum SettingRegistration {
    private final class ThreadList {
        var settings: [any SettingBox] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { list in
            #if canImport(Darwin)
            Unmanaged<AnyObject>.fromOpaque(list).release()
            #else
            if let list { Unmanaged<AnyObject>.fromOpaque(list).release() }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed with \(result)")
        return key
    }()

    private static var list: ThreadList {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadList>.fromOpaque(pointer).takeUnretainedValue()
        }
        let list = ThreadList()
        pthread_setspecific(key, Unmanaged.passRetained(list).toOpaque())
        return list
    }

    /// Notes a setting just created on this thread.
    static func register(_ setting: any SettingBox) {
        list.settings.append(setting)
    }

    /// Returns, and forgets, the settings created on this thread since the last call.
    static func take() -> [any SettingBox] {
        let list = list
        defer { list.settings = [] }
        return list.settings
    }
}
