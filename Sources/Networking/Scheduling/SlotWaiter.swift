import Foundation

/// A call waiting for a slot of the ``CallSlots``: its priority and arrival, and how it is resumed — the
/// continuation its task waits on, or, for a group of identical calls (see ``CallGroups``), the group's
/// exchange, which is a waiter itself (``SharedTransfer``, a subclass: nothing more is made while it
/// waits). Its deadline passing (``AttemptWatch``) takes it out of the queue.
class SlotWaiter: PlacedAttempt, @unchecked Sendable {
    // @unchecked: `state`, `arrival`, `resumption` and `line` are guarded by the slots' lock.

    /// Where the waiter is.
    enum State {
        /// Not queued yet: on its way to ``CallSlots/enqueue(_:for:continuation:)``.
        case arriving
        /// In its line.
        case queued
        /// It got a slot.
        case granted
        /// It left the queue (or never entered it) with this error. Boxed: a ``NetworkError`` is 90 bytes, and
        /// every queued call holds a state (10,000 calls queued behind a limit).
        indirect case left(NetworkError)
    }

    /// How a waiter learns that it got a slot, or left the queue.
    enum Resumption {
        /// A task waits on this continuation.
        case task(UnsafeContinuation<HostLine, any Error>)
        /// No task waits: the shared exchange that waits starts (never with a lock held; see
        /// ``NetworkProvider/slotGranted(to:_:)``).
        case exchange(SharedTransfer)

        /// Hands `result` on.
        func resume(with result: Result<HostLine, NetworkError>) {
            switch self {
            case .task(let continuation): continuation.resume(with: result.mapError { $0 })
            case .exchange(let transfer): transfer.provider.slotGranted(to: transfer, result)
            }
        }
    }

    private let slots: CallSlots
    /// The call's deadline, in seconds, for the error its passing throws.
    private let deadlineSeconds: TimeInterval
    var state = State.arriving
    /// Its call's place among the calls of its priority (``RequestContext/queueArrival``); 0 until queued
    /// when it has none yet.
    var arrival: UInt64
    var resumption: Resumption?
    /// It waited in its line (it was not granted a slot, nor did it leave, before it was queued).
    var wasQueued = false
    /// Its call's priority. (After the enum and the flag above, where it takes no room of its own: every
    /// queued call holds a waiter.)
    let priority: RequestPriority
    /// The line it waits in, while it does.
    var line: HostLine?
    /// Its place in the heap of the ``AttemptWatch`` that watches it (see ``PlacedAttempt``), under the watch's lock.
    var watchSlot = 0

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

    /// Every call that waited for it left: it leaves the queue with `reason`, the last one's (cancelled, or
    /// its deadline passed).
    func leave(because reason: NetworkError) {
        slots.abandon(self, because: reason)
    }
}
