import Foundation

/// A call waiting for a slot of the ``CallSlots``: its priority and arrival, and the continuation its
/// task waits on. Its deadline passing (``AttemptWatch``) takes it out of the queue.
final class SlotWaiter: WatchedAttempt, @unchecked Sendable {
    // @unchecked: `state`, `arrival`, `continuation` and `line` are guarded by the slots' lock.

    /// Where the waiter is.
    enum State {
        /// Not queued yet: its task is on its way to ``CallSlots/enqueue(_:for:continuation:)``.
        case arriving
        /// In its line.
        case queued
        /// It got a slot.
        case granted
        /// It left the queue (or never entered it) with this error.
        case left(NetworkError)
    }

    let priority: RequestPriority
    private let slots: CallSlots
    /// The call's deadline, in seconds, for the error its passing throws.
    private let deadlineSeconds: TimeInterval
    var state = State.arriving
    /// Its call's place among the calls of its priority (``RequestContext/queueArrival``); 0 until queued
    /// when it has none yet.
    var arrival: UInt64
    var continuation: UnsafeContinuation<HostLine, any Error>?
    /// The line it waits in, while it does.
    var line: HostLine?

    init(priority: RequestPriority, arrival: UInt64 = 0, slots: CallSlots, deadlineSeconds: TimeInterval) {
        self.priority = priority
        self.arrival = arrival
        self.slots = slots
        self.deadlineSeconds = deadlineSeconds
    }

    /// Why it left before it got a slot, if it did. Call with the slots' lock held.
    var leftBecause: NetworkError? {
        if case .left(let reason) = state { return reason }
        return nil
    }

    /// The call's deadline passed while it waited: it leaves the queue.
    func expire() {
        slots.abandon(self, because: .deadlineExceeded(seconds: deadlineSeconds))
    }
}
