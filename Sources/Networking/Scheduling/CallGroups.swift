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
/// - Each caller has its own deadline. The exchange runs under the latest deadline among its callers when
///   it starts; a caller whose deadline is earlier is watched by the provider's ``AttemptWatch`` and leaves
///   with ``NetworkError/deadlineExceeded(seconds:)`` when it passes, the others waiting on. A caller that
///   joined later with a later deadline is not bounded by the exchange's: when the exchange ends with the
///   deadline error while such callers wait, it runs again for them under the latest of theirs.
/// - An outcome ends the group before it is handed out: a call made after it starts a new exchange.
final class CallGroups: @unchecked Sendable {
    // @unchecked: `groups` and the groups' and waiters' mutable state are guarded by `lock`.
    private let lock = NSLock()
    private var groups: [CallGroupKey: CallGroup] = [:]

    /// How a caller entered.
    enum Entry {
        /// It started `group`: the caller starts its exchange.
        case started(CallGroup)
        /// It joined the exchange in flight; `watched`: its deadline is earlier than the exchange's.
        case joined(watched: Bool)
        /// It had already left (cancelled before it entered): its continuation was resumed.
        case left
    }

    /// What the exchange does after an outcome.
    enum Next {
        case done
        /// Runs again under `deadline`, for the callers that joined with a later one.
        case again(Deadline)
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
            group.waiters[ObjectIdentifier(waiter)] = waiter
            let watched = Self.isEarlier(waiter.expiry, than: group.expiry)
            lock.unlock()
            return .joined(watched: watched)
        }
        let group = CallGroup(key: key, expiry: waiter.expiry)
        group.waiters[ObjectIdentifier(waiter)] = waiter
        waiter.group = group
        groups[key] = group
        lock.unlock()
        return .started(group)
    }

    /// Hands `exchange` to `group`; cancels it at once when every caller left meanwhile.
    func attach(_ exchange: Task<Void, Never>, to group: CallGroup) {
        lock.lock()
        let ended = group.ended
        if !ended { group.exchange = exchange }
        lock.unlock()
        if ended { exchange.cancel() }
    }

    /// `waiter` leaves with `error` (cancelled, or its deadline passed): resumed at once unless it already
    /// ended. The last caller to leave cancels the exchange.
    func leave(_ waiter: CallWaiter, with error: any Error) {
        lock.lock()
        guard let continuation = waiter.continuation else {
            if waiter.group == nil, waiter.leftWith == nil { waiter.leftWith = error }   // before it entered
            lock.unlock()
            return
        }
        waiter.continuation = nil
        var cancelled: Task<Void, Never>?
        if let group = waiter.group {
            group.waiters[ObjectIdentifier(waiter)] = nil
            if group.waiters.isEmpty, !group.ended {
                group.ended = true
                if groups[group.key] === group { groups[group.key] = nil }
                cancelled = group.exchange
            }
        }
        lock.unlock()
        cancelled?.cancel()
        continuation.resume(throwing: error)
    }

    /// The exchange of `group` ended with `outcome`: hands it to every caller, or, when it ran out of time
    /// and callers with a later deadline wait, says to run again for them.
    func finish(_ group: CallGroup, with outcome: Result<Response, any Error>, watch: AttemptWatch) -> Next {
        lock.lock()
        if group.ended {   // every caller left: nobody to tell
            lock.unlock()
            return .done
        }
        var handed: [(CallWaiter, UnsafeContinuation<Response, any Error>)] = []
        if case .failure(NetworkError.deadlineExceeded) = outcome,
            let latest = group.waiters.values.max(by: { Self.isEarlier($0.expiry, than: $1.expiry) }),
            Self.isEarlier(group.expiry, than: latest.expiry)
        {
            // Those whose deadline is not later than the exchange's end with it; the others go on.
            for (id, waiter) in group.waiters where !Self.isEarlier(group.expiry, than: waiter.expiry) {
                group.waiters[id] = nil
                if let continuation = waiter.continuation { handed.append((waiter, continuation)) }
                waiter.continuation = nil
            }
            let watched = group.waiters.values.filter { $0 !== latest && Self.isEarlier($0.expiry, than: latest.expiry) }
            group.expiry = latest.expiry
            lock.unlock()
            for waiter in watched { watch.watch(waiter, until: waiter.expiry.map { DispatchTime(uptimeNanoseconds: $0) }) }
            for (waiter, continuation) in handed { continuation.resume(throwing: waiter.deadlineError) }
            return .again(Deadline(seconds: latest.seconds, expiry: latest.expiry.map { DispatchTime(uptimeNanoseconds: $0) }))
        }
        group.ended = true
        if groups[group.key] === group { groups[group.key] = nil }
        for waiter in group.waiters.values {
            if let continuation = waiter.continuation { handed.append((waiter, continuation)) }
            waiter.continuation = nil
        }
        group.waiters = [:]
        lock.unlock()
        for (waiter, continuation) in handed {
            switch outcome {
            case .success(let response): continuation.resume(returning: response)
            case .failure(NetworkError.deadlineExceeded): continuation.resume(throwing: waiter.deadlineError)   // in its own seconds
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
        return .done
    }

    /// Whether `expiry` comes before `other` (`nil`: never).
    private static func isEarlier(_ expiry: UInt64?, than other: UInt64?) -> Bool {
        guard let expiry else { return false }
        guard let other else { return true }
        return expiry < other
    }
}

/// The callers of one exchange.
final class CallGroup: @unchecked Sendable {
    // @unchecked: every `var` is guarded by the lock of the ``CallGroups`` that holds it.
    let key: CallGroupKey
    var waiters: [ObjectIdentifier: CallWaiter] = [:]
    /// The exchange's deadline, in uptime nanoseconds; `nil` for none.
    var expiry: UInt64?
    var exchange: Task<Void, Never>?
    /// Every caller left, or the outcome was handed out.
    var ended = false

    init(key: CallGroupKey, expiry: UInt64?) {
        self.key = key
        self.expiry = expiry
    }
}

/// One caller of a ``CallGroup``: its continuation and deadline.
final class CallWaiter: WatchedAttempt, @unchecked Sendable {
    // @unchecked: `continuation`, `group` and `leftWith` are guarded by the lock of `groups`.
    let groups: CallGroups
    /// The caller's deadline, in uptime nanoseconds; `nil` for none.
    let expiry: UInt64?
    /// The caller's allowance, for its error.
    let seconds: TimeInterval
    var continuation: UnsafeContinuation<Response, any Error>?
    var group: CallGroup?
    /// Why it left before it entered (it was cancelled first).
    var leftWith: (any Error)?

    init(groups: CallGroups, deadline: Deadline) {
        self.groups = groups
        self.expiry = deadline.expiry?.uptimeNanoseconds
        self.seconds = deadline.seconds
    }

    /// The error of this caller's deadline.
    var deadlineError: NetworkError { .deadlineExceeded(seconds: seconds) }

    /// Its deadline passed (``AttemptWatch``): it leaves, the others wait on.
    func expire() {
        groups.leave(self, with: deadlineError)
    }
}

extension Deadline {
    /// A deadline at `expiry` (`nil`: none), which `seconds` after its call began.
    init(seconds: TimeInterval, expiry: DispatchTime?) {
        self.seconds = seconds
        self.expiry = expiry
    }
}
