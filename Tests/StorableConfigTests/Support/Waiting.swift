import Foundation

// The one way these tests wait. What they test is that something arrives or that something ends, never how fast:
// the behaviour promised is within a second, but CI's machine is shared and loaded, so the limits are generous
// (the benchmarks measure speed).

/// Polls `condition` every 10 ms until it holds or `seconds` have passed; returns whether it held.
///
/// ```swift
/// #expect(waitUntil { config.port == 2 })
/// ```
///
/// To show that something did not happen, wait for a later change that must arrive after it, by the same path,
/// then look: a pause followed by a look proves nothing on a loaded machine.
func waitUntil(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// The form for async tests: polls `condition` every 10 ms without blocking a thread of the cooperative pool,
/// which the other tests share (two cores in CI).
func waitUntil(seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Runs `body` on a thread of its own and returns whether it returned within `seconds`: a call that must not
/// block fails the test instead of hanging it.
///
/// ```swift
/// #expect(finishes { config.volume = 3 }, "a write from inside the store's write hung")
/// ```
func finishes(within seconds: Double = 20, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}
