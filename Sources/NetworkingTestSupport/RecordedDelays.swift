import Foundation

/// A `sleep` for ``NetworkProvider`` that records each delay and returns at once, so retry tests
/// are deterministic and never wait on the wall clock.
///
/// ```swift
/// let delays = RecordedDelays()
/// let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), sleep: delays.sleep)
/// // after a call that was retried twice: delays.all == [0.5, 1.0]
/// ```
public final class RecordedDelays: @unchecked Sendable {
    // @unchecked: `recorded` is guarded by `lock`.
    private let lock = NSLock()
    private var recorded: [TimeInterval] = []

    /// Creates an empty record.
    public init() {}

    /// Every delay asked for, in order.
    public var all: [TimeInterval] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    /// Records `seconds` and returns at once; throws `CancellationError` when the task is cancelled,
    /// as a real sleep would. Pass it as `sleep: delays.sleep`, or call it: `try await delays.sleep(0.5)`.
    ///
    /// A `@Sendable` closure rather than a method, so that `delays.sleep` is `@Sendable` in every
    /// language mode: in Swift 5 mode a method reference is not inferred `@Sendable` (SE-0418 is on only
    /// in Swift 6 mode), and passing it where ``NetworkProvider`` wants a `@Sendable` function warns.
    public var sleep: @Sendable (TimeInterval) async throws -> Void {
        { [self] seconds in
            try Task.checkCancellation()
            record(seconds)
        }
    }

    private func record(_ seconds: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(seconds)
    }
}
