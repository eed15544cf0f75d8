import CStorableConfigSupport

/// Tells code that recurses into values of any depth (the coders of `Codable` values, whose frames are the
/// value types' own code) when the thread's stack runs short, so that a deeply nested value is an error, not a
/// crash, also on a thread or task with a small stack.
enum StackDepthGuard {
    /// The nesting depth from which the coders ask: shallower values come nowhere near the end of a stack.
    static let checkedDepth = 16

    /// The stack left below which a coder stops: room for a value type's own frames and for the error's way
    /// out.
    static let reserve = 64 * 1024

    /// Whether less than ``reserve`` bytes of stack are left (never, on a platform that does not say).
    static var isStackLow: Bool {
        storable_config_stack_space_left() < reserve
    }

    /// Why a coder stopped, as a sentence for messages.
    static func stackLowMessage(depth: Int) -> String {
        "The value is nested too deeply for this thread's stack (less than \(reserve / 1024) KiB was left at "
            + "depth \(depth))."
    }
}
