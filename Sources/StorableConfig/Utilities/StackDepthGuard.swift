#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
    ///
    /// Asked for every nested value from ``checkedDepth`` on, so the thread's lowest stack address is asked of
    /// pthread once per thread (on Linux's main thread glibc reads `/proc/self/maps` for it: about 0.1 ms) and
    /// kept in a pthread key.
    static var isStackLow: Bool {
        guard let low = cachedLowestStackAddress() else { return false }
        // The address of a local of this frame: where the stack is now.
        var marker = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        // Below the stack's known bounds (a stack the thread switched to): nothing can be said.
        guard here >= low else { return false }
        return here - low < UInt(reserve)
    }

    /// Why a coder stopped, as a sentence for messages.
    static func stackLowMessage(depth: Int) -> String {
        "The value is nested too deeply for this thread's stack (less than \(reserve / 1024) KiB was left at "
            + "depth \(depth))."
    }

    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    /// ``lowestStackAddress()``, from this thread's pthread key after the first time (`1` there: not known).
    private static func cachedLowestStackAddress() -> UInt? {
        guard let key else { return lowestStackAddress() }
        switch UInt(bitPattern: pthread_getspecific(key)) {
        case 0:
            let low = lowestStackAddress()
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: low ?? 1))
            return low
        case 1:
            return nil
        case let low:
            return low
        }
    }

    /// The lowest address of the calling thread's stack, or `nil` where the platform does not say (and in a
    /// statically linked program on Linux, where `pthread_getattr_np` cannot be looked up: only the depth
    /// limit, ``StoredValue/maximumDepth``, then guards the stack).
    private static func lowestStackAddress() -> UInt? {
        #if canImport(Darwin)
            let thread = pthread_self()
            let high = UInt(bitPattern: pthread_get_stackaddr_np(thread))
            let size = UInt(pthread_get_stacksize_np(thread))
            return high > size ? high - size : nil
        #elseif canImport(Glibc) || canImport(Musl)
            var attributes = pthread_attr_t()
            guard let getAttributes = threadAttributes, getAttributes(pthread_self(), &attributes) == 0 else {
                return nil
            }
            defer { pthread_attr_destroy(&attributes) }
            var address: UnsafeMutableRawPointer?
            var size = 0
            guard pthread_attr_getstack(&attributes, &address, &size) == 0, let address else { return nil }
            return UInt(bitPattern: address)
        #else
            return nil
        #endif
    }

    #if !canImport(Darwin) && (canImport(Glibc) || canImport(Musl))
        private typealias ThreadAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32

        /// `pthread_getattr_np`, which the C library has but declares only for GNU sources, so Swift's Glibc
        /// module does not show it: looked up by name once.
        private static let threadAttributes: ThreadAttributes? = {
            // RTLD_DEFAULT: the process's global symbols.
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np") else { return nil }
            return unsafeBitCast(symbol, to: ThreadAttributes.self)
        }()
    #endif
}
