import Foundation

/// Runs file work that blocks (a long copy, an `fsync`) on a dispatch queue of its own, never on a thread
/// of Swift's cooperative pool, which has one thread per core and is shared by every task of the process.
enum BlockingFileWork {
    private static let queue: DispatchQueue = {
        let queue = DispatchQueue(label: "Networking.BlockingFileWork", qos: .userInitiated, attributes: .concurrent)
        queue.setSpecific(key: marker, value: ())
        return queue
    }()
    private static let marker = DispatchSpecificKey<Void>()

    /// Whether the caller runs on the blocking queue (tests check that blocking work does).
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) != nil }

    /// Whether the task awaiting a ``run(_:)`` was cancelled; the work checks it between blocks.
    final class Cancellation: @unchecked Sendable {
        // @unchecked: `cancelled` is guarded by `lock`.
        private let lock = NSLock()
        private var cancelled = false

        /// Whether the awaiting task was cancelled.
        var isCancelled: Bool {
            lock.lock()
            defer { lock.unlock() }
            return cancelled
        }

        func cancel() {
            lock.lock()
            cancelled = true
            lock.unlock()
        }
    }

    /// Runs `work` on the blocking queue and returns what it returns. Cancelling the calling task sets the
    /// ``Cancellation`` the work is given; the work decides where it stops (it cannot be interrupted).
    static func run<T: Sendable>(_ work: @escaping @Sendable (Cancellation) throws -> T) async throws -> T {
        let cancellation = Cancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                queue.async {
                    continuation.resume(with: Result { try work(cancellation) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }
}
