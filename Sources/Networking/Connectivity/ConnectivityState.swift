import Foundation

/// Online or not, and the tasks waiting for it to be online: the platform-free heart of
/// ``ManualConnectivity`` and the Apple platforms' path monitor. Each waiter costs one continuation (no
/// task of its own); a transition to online resumes them all; cancelling a waiting task ends its wait at
/// once with `CancellationError`. No wakeup is lost: a waiter is either stored under the lock before the
/// transition (and resumed by it) or sees the new state when it is stored.
final class ConnectivityState: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`.
    private let lock = NSLock()
    private var online: Bool
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    /// Waiters that entered but whose continuation is not stored yet.
    private var entering: Set<Int> = []
    /// Waiters cancelled before their continuation was stored.
    private var cancelledEarly: Set<Int> = []
    private var nextWaiter = 0

    /// A path monitor's report, as the state machine reads it.
    enum PathStatus: Sendable {
        /// A usable path.
        case satisfied
        /// No usable path.
        case unsatisfied
        /// A path that an attempt would bring up (an on-demand VPN, a cellular radio asleep): usable.
        case requiresConnection
    }

    init(online: Bool) {
        self.online = online
    }

    /// Whether the path is usable now.
    var isOnline: Bool {
        lock.lock()
        defer { lock.unlock() }
        return online
    }

    /// How many tasks wait now (for tests).
    var waiting: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiters.count + entering.count
    }

    /// Takes a path monitor's report: only `unsatisfied` counts as offline.
    func update(_ status: PathStatus) {
        update(online: status != .unsatisfied)
    }

    /// Sets the state; a transition to online resumes every waiter.
    func update(online: Bool) {
        lock.lock()
        self.online = online
        let resumed = online ? Array(waiters.values) : []
        if online { waiters = [:] }
        lock.unlock()
        for continuation in resumed { continuation.resume() }
    }

    /// Returns once online (at once if it is); throws `CancellationError` when the task is cancelled first.
    func waitUntilOnline() async throws {
        guard let waiter = enter() else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                store(continuation, for: waiter)
            }
        } onCancel: {
            cancel(waiter)
        }
    }

    /// A new waiter's number, or `nil` when online.
    private func enter() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        if online { return nil }
        nextWaiter += 1
        entering.insert(nextWaiter)
        return nextWaiter
    }

    private func store(_ continuation: CheckedContinuation<Void, any Error>, for waiter: Int) {
        lock.lock()
        entering.remove(waiter)
        if cancelledEarly.remove(waiter) != nil {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
        } else if online {
            lock.unlock()
            continuation.resume()
        } else {
            waiters[waiter] = continuation
            lock.unlock()
        }
    }

    private func cancel(_ waiter: Int) {
        lock.lock()
        if let continuation = waiters.removeValue(forKey: waiter) {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            return
        }
        if entering.contains(waiter) { cancelledEarly.insert(waiter) }   // its continuation is not stored yet
        lock.unlock()
    }
}
