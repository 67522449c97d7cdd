import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The identical calls in flight of one provider, by ``CallGroupKey``: each group shares one exchange (a
/// whole pipeline run: adapt, send, validate, retry, the cache's part), and every caller waits for its
/// outcome with a continuation of its own. A join costs a lock, a dictionary lookup and a continuation.
///
/// - A caller that is cancelled leaves at once with ``NetworkError/cancelled``; the exchange is cancelled
///   when the last caller left, and the group is gone then (the next identical call starts a new one).
/// - Each caller has its own deadline: the provider's ``AttemptWatch`` watches it, and a caller whose
///   deadline passes leaves with ``NetworkError/deadlineExceeded(seconds:)`` while the others wait on. The
///   exchange has no deadline of its own: it is cut only when its last caller left (cancelled or out of
///   time), so a caller that joins with a later deadline never sees it cut at an earlier one's. It only
///   knows its callers' latest deadline (``LatestDeadline``): a retry delay outlasting it is not waited.
/// - An outcome ends the group before it is handed out: a call made after it starts a new exchange. A
///   group that ended (every caller left, its exchange cancelled) is out of the table in the same lock: a
///   new caller never joins a cancelled exchange.
final class CallGroups: @unchecked Sendable {
    // @unchecked: `groups` and the groups' and waiters' mutable state are guarded by `lock`.
    private let lock = NSLock()
    private var groups: [CallGroupKey: CallGroup] = [:]

    /// How a caller entered.
    enum Entry {
        /// It started `group`: the caller starts its exchange.
        case started(CallGroup)
        /// It joined the exchange in flight.
        case joined
        /// It had already left (cancelled, or out of time, before it entered): its continuation was resumed.
        case left
    }

    /// Puts `waiter` (whose `continuation` this resumes) in the group of `key`: the one in flight, or a new one.
    func enter(_ waiter: CallWaiter, key: CallGroupKey, continuation: UnsafeContinuation<Response, any Error>) -> Entry {
        lock.lock()
        if let error = waiter.leftWith {
            lock.unlock()
            continuation.resume(throwing: error)
            return .left
        }
        waiter.continuation = continuation
        if let group = groups[key] {
            waiter.group = group
            group.joiners[ObjectIdentifier(waiter)] = waiter
            group.callers.extend(to: waiter.expiry)
            lock.unlock()
            return .joined
        }
        let group = CallGroup(key: key, callers: LatestDeadline(waiter.expiry))
        group.starter = waiter
        waiter.group = group
        groups[key] = group
        lock.unlock()
        return .started(group)
    }

    /// Hands `exchange` to `group`; cancels it at once when every caller left meanwhile.
    func attach(_ exchange: Task<Void, Never>, to group: CallGroup) {
        lock.lock()
        let ended = group.ended
        group.exchange = exchange   // when ended too: its starter, the last to leave, waits for its end
        group.slotWaiter = nil   // its wait, if it had one, is over
        lock.unlock()
        if ended { exchange.cancel() }
    }

    /// `group` waits for the slot of its exchange's first request with `waiter` (no task yet): the last
    /// caller to leave takes it out of the queue; at once when every caller left meanwhile.
    func queue(_ waiter: SlotWaiter, for group: CallGroup) {
        lock.lock()
        let ended = group.ended
        if !ended, group.exchange == nil { group.slotWaiter = waiter }
        lock.unlock()
        if ended { waiter.leave(because: group.callers.cutError ?? .cancelled) }
    }

    /// `waiter` leaves with `error` (cancelled, or its deadline passed): resumed at once unless it already
    /// ended. The last caller to leave cancels the exchange; when its deadline passed, the exchange ends
    /// with that error, not as cancelled (``LatestDeadline/cut(by:)``).
    func leave(_ waiter: CallWaiter, with error: any Error) {
        lock.lock()
        guard let continuation = waiter.continuation else {
            if waiter.group == nil, waiter.leftWith == nil { waiter.leftWith = error }   // before it entered
            lock.unlock()
            return
        }
        waiter.continuation = nil
        var (cancelled, queued): (Task<Void, Never>?, SlotWaiter?) = (nil, nil)
        if let group = waiter.group {
            if group.starter === waiter { group.starter = nil } else { group.joiners[ObjectIdentifier(waiter)] = nil }
            if group.starter == nil, group.joiners.isEmpty, !group.ended {
                group.ended = true
                waiter.endedItsGroup = true
                if let error = error as? NetworkError, case .deadlineExceeded = error { group.callers.cut(by: error) }
                if groups[group.key] === group { groups[group.key] = nil }
                (cancelled, queued) = (group.exchange, group.slotWaiter)
                group.slotWaiter = nil
            }
        }
        lock.unlock()
        cancelled?.cancel()
        queued?.leave(because: error as? NetworkError ?? .cancelled)   // out of the queue at once; its exchange's task starts only to end
        continuation.resume(throwing: error)
    }

    /// The exchange `waiter` cancelled as the last of its group to leave, for its starter to wait for its
    /// end (the events its monitors see for its call are told before the call returns); `nil` otherwise.
    func exchange(leftLastBy waiter: CallWaiter) -> Task<Void, Never>? {
        lock.lock()
        defer { lock.unlock() }
        return waiter.endedItsGroup ? waiter.group?.exchange : nil
    }

    /// The exchange of `group` ended with `outcome`: hands it to every caller still waiting.
    func finish(_ group: CallGroup, with outcome: Result<Response, any Error>) {
        lock.lock()
        if group.ended {   // every caller left: nobody to tell
            lock.unlock()
            return
        }
        group.ended = true
        if groups[group.key] === group { groups[group.key] = nil }
        let starter = group.starter.flatMap { waiter in waiter.continuation.map { (waiter, $0) } }
        group.starter?.continuation = nil
        group.starter = nil
        var handed: [(CallWaiter, UnsafeContinuation<Response, any Error>)] = []
        if !group.joiners.isEmpty {
            handed.reserveCapacity(group.joiners.count)
            for waiter in group.joiners.values {
                if let continuation = waiter.continuation { handed.append((waiter, continuation)) }
                waiter.continuation = nil
            }
            group.joiners = [:]
        }
        lock.unlock()
        if let (waiter, continuation) = starter { Self.hand(outcome, to: waiter, continuation) }
        for (waiter, continuation) in handed { Self.hand(outcome, to: waiter, continuation) }
    }

    /// Resumes `waiter`'s `continuation` with `outcome`.
    private static func hand(_ outcome: Result<Response, any Error>, to waiter: CallWaiter, _ continuation: UnsafeContinuation<Response, any Error>) {
        switch outcome {
        case .success(let response): continuation.resume(returning: response)
        // A retry delay outlasting every caller's deadline (``Deadline/callers``): in its own seconds.
        case .failure(NetworkError.deadlineExceeded): continuation.resume(throwing: waiter.deadlineError)
        case .failure(let error): continuation.resume(throwing: error)
        }
    }
}

/// The callers of one exchange.
final class CallGroup: @unchecked Sendable {
    // @unchecked: every `var` is guarded by the lock of the ``CallGroups`` that holds it.
    let key: CallGroupKey
    /// The caller that started it, while it waits: a group of one needs no dictionary.
    var starter: CallWaiter?
    /// The callers that joined it, while they wait.
    var joiners: [ObjectIdentifier: CallWaiter] = [:]
    /// The latest deadline among its callers so far: the exchange's ``Deadline/callers``.
    let callers: LatestDeadline
    var exchange: Task<Void, Never>?
    /// The waiter for the slot of the exchange's first request, while the group waits in the queue
    /// before its exchange has a task (see ``NetworkProvider/takesSlotFirst(_:built:interceptor:)``).
    var slotWaiter: SlotWaiter?
    /// Every caller left, or the outcome was handed out.
    var ended = false

    init(key: CallGroupKey, callers: LatestDeadline) {
        self.key = key
        self.callers = callers
    }
}

/// One caller of a ``CallGroup``: its continuation and deadline, and what it built (one object per caller:
/// the caller's own task keeps nothing else while it waits).
final class CallWaiter: WatchedAttempt, @unchecked Sendable {
    // @unchecked: `continuation`, `group` and `leftWith` are guarded by the lock of `groups`; `context` and
    // `joined` are read and written by the caller's own task only.
    let groups: CallGroups
    /// The caller's deadline; `nil` for none.
    let expiry: DispatchTime?
    /// The caller's allowance, for its error.
    let seconds: TimeInterval
    /// The request the caller built.
    let built: URLRequest
    /// When the call began.
    let started: DispatchTime
    /// The group it enters.
    let key: CallGroupKey
    /// The caller's own context, once it needs one (its account was asked for, or it joined and the
    /// monitors are told).
    var context: RequestContext?
    /// Whether it joined an exchange in flight (it did not start it).
    var joined = false
    var continuation: UnsafeContinuation<Response, any Error>?
    var group: CallGroup?
    /// Why it left before it entered (it was cancelled first).
    var leftWith: (any Error)?
    /// It was the last of its group to leave: it cancelled the exchange.
    var endedItsGroup = false

    init(groups: CallGroups, deadline: Deadline, built: URLRequest, started: DispatchTime, context: RequestContext?, key: CallGroupKey) {
        self.groups = groups
        self.expiry = deadline.expiry
        self.seconds = deadline.seconds
        self.built = built
        self.started = started
        self.context = context
        self.key = key
    }

    /// The caller's deadline.
    var deadline: Deadline { Deadline(seconds: seconds, expiry: expiry) }

    /// The error of this caller's deadline.
    var deadlineError: NetworkError { .deadlineExceeded(seconds: seconds) }

    /// Its deadline passed (``AttemptWatch``): it leaves, the others wait on.
    func expire() {
        groups.leave(self, with: deadlineError)
    }
}

/// The latest deadline among a shared exchange's callers so far (see ``Deadline/callers``); a caller
/// without a deadline makes it none for good.
final class LatestDeadline: @unchecked Sendable {
    // @unchecked: `latest`, `unbounded` and `cut` are guarded by `lock`.
    private let lock = NSLock()
    private var latest: UInt64 = 0
    private var unbounded = false
    private var cut: NetworkError?

    init(_ expiry: DispatchTime?) {
        extend(to: expiry)
    }

    /// The latest deadline; `nil` for none.
    var expiry: DispatchTime? {
        lock.lock()
        defer { lock.unlock() }
        return unbounded ? nil : DispatchTime(uptimeNanoseconds: latest)
    }

    /// Whether the exchange must end: its last caller left as its deadline passed, or the latest passed.
    var hasPassed: Bool {
        lock.lock()
        defer { lock.unlock() }
        if cut != nil { return true }
        return !unbounded && DispatchTime.now().uptimeNanoseconds >= latest
    }

    /// The error the exchange ends with: its last caller's deadline error (see ``cut(by:)``).
    var cutError: NetworkError? {
        lock.lock()
        defer { lock.unlock() }
        return cut
    }

    /// The last caller left with `error`, its deadline having passed: the exchange ends with it.
    func cut(by error: NetworkError) {
        lock.lock()
        defer { lock.unlock() }
        cut = error
    }

    /// A caller with `expiry` (`nil`: none) joined.
    func extend(to expiry: DispatchTime?) {
        lock.lock()
        defer { lock.unlock() }
        guard let expiry else {
            unbounded = true
            return
        }
        latest = max(latest, expiry.uptimeNanoseconds)
    }
}

extension Deadline {
    /// A deadline at `expiry` (`nil`: none), which `seconds` after its call began.
    init(seconds: TimeInterval, expiry: DispatchTime?) {
        self.seconds = seconds
        self.expiry = expiry
    }
}
