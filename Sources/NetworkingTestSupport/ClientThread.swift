import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a URL protocol's client must be called.
///
/// - Linux: swift-corelibs-foundation reads its task registry in the client callbacks, and that
///   registry may only be touched on the task's internal `workQueue`; calling the client from another
///   thread races with the session and crashed 5 runs in 10 under load. The queue is not public, so it
///   is found by reflection, and if a toolchain renames it the mock stops with a message that says so
///   (``workQueue(of:)`` has a test of its own), rather than crash at random.
/// - Apple platforms: the URL loading system expects the client on the thread that called
///   `startLoading`, whose run loop is running; the calls are scheduled on that run loop.
struct ClientThread: @unchecked Sendable {
    // @unchecked: a DispatchQueue is thread-safe; a RunLoop is only used through `perform` and a wake-up,
    // which may be called from any thread.
    #if canImport(FoundationNetworking)
        let queue: DispatchQueue
        /// The session `task` belongs to, for its request timeout; `nil` if this toolchain hides it.
        let session: URLSession?

        /// The calling thread's reporter, for `task` (call from `startLoading`).
        static func current(for task: URLSessionTask?) -> ClientThread? {
            guard let task else { return nil }
            let (queue, session) = internals(of: task)
            guard let queue else {
                fatalError(
                    "MockURLProtocol: swift-corelibs-foundation's URLSessionTask has no `workQueue` any more, so the mock "
                        + "cannot call URLSession back safely. This toolchain changed its internals: update "
                        + "ClientThread.workQueue(of:) in NetworkingTestSupport."
                )
            }
            return ClientThread(queue: queue, session: session)
        }

        func run(_ body: @escaping @Sendable () -> Void) {
            queue.async(execute: body)
        }

        /// `task`'s private work queue, found by reflection; `nil` when this toolchain has none.
        static func workQueue(of task: URLSessionTask) -> DispatchQueue? {
            internals(of: task).workQueue
        }

        /// `task`'s private work queue and session, found by reflection in one walk (it runs for every
        /// request); each `nil` when this toolchain has none.
        static func internals(of task: URLSessionTask) -> (workQueue: DispatchQueue?, session: URLSession?) {
            var (queue, session): (DispatchQueue?, URLSession?) = (nil, nil)
            var mirror: Mirror? = Mirror(reflecting: task)
            while let current = mirror, queue == nil || session == nil {
                for child in current.children {
                    if child.label == "workQueue" { queue = child.value as? DispatchQueue }
                    if child.label == "session" { session = unwrapped(child.value) as? URLSession }
                }
                mirror = current.superclassMirror
            }
            return (queue, session)
        }

        /// `value`, or what it wraps when it is an `Optional` (implicitly unwrapped or not).
        private static func unwrapped(_ value: Any) -> Any? {
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return value }
            return mirror.children.first.flatMap { unwrapped($0.value) }
        }
    #else
        let runLoop: RunLoop
        /// The session is out of the mock's reach here: a request's own timeout applies.
        var session: URLSession? { nil }

        /// The calling thread's reporter (call from `startLoading`).
        static func current(for task: URLSessionTask?) -> ClientThread? {
            ClientThread(runLoop: RunLoop.current)
        }

        func run(_ body: @escaping @Sendable () -> Void) {
            runLoop.perform(inModes: [.common], block: body)
            CFRunLoopWakeUp(runLoop.getCFRunLoop())
        }
    #endif
}
