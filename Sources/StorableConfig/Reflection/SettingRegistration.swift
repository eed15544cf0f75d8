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
        // Only ever reached from its own thread: no dynamic exclusivity check.
        @exclusivity(unchecked) var settings: [any SettingBox] = []
    }

    private static let threadList = ThreadLocal { ThreadList() }

    private static var list: ThreadList { threadList.value }

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
