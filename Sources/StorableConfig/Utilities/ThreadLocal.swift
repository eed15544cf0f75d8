#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An object per thread, made on the thread's first use and released when the thread ends.
final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    // `key` is set once; each thread only ever reaches its own object. Read without a dynamic exclusivity check.
    @exclusivity(unchecked) private var key = pthread_key_t()
    private let make: () -> Value

    init(_ make: @escaping () -> Value) {
        self.make = make
        let result = pthread_key_create(&key) { object in
            #if canImport(Darwin)
                Unmanaged<AnyObject>.fromOpaque(object).release()
            #else
                if let object { Unmanaged<AnyObject>.fromOpaque(object).release() }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed with \(result)")
    }

    /// This thread's object.
    var value: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value).toOpaque())
        return value
    }
}
