import Foundation

/// The provider's slots for requests in flight (see ``Scheduling``): at most ``maximumCalls`` in all and
/// ``maximumCallsPerHost`` per origin (scheme, host and port), and the calls that wait for one, sent by
/// ``RequestPriority`` (high first) and in arrival order within a priority.
///
/// A slot is held per exchange: from just before its `URLSessionTask` starts until the task completed
/// (its body gathered, written to a file, or streamed to its reader), so a redirect hop takes a slot of
/// its own host, and a call waiting for a retry delay or a token refresh holds none.
///
/// Cheap by construction: taking a free slot is a lock, a look-up of its origin and two counters, giving
/// it back a lock and two counters; a waiter is one object and one continuation or callback (no task of its own),
/// queued in O(1), granted after a look at the first waiter of each origin with waiters, and removed in
/// O(1) when it leaves early (marked, then dropped when it reaches the head, or with others once the dead
/// outnumber the living).
final class CallSlots: @unchecked Sendable {
    // @unchecked: every `var` here and in the ``HostLine``s and ``SlotWaiter``s it holds is guarded by `lock`.

    /// The limit on requests in flight to all origins together.
    let maximumCalls: Int
    /// The limit on requests in flight to one origin.
    let maximumCallsPerHost: Int

    private let lock = NSLock()
    private var inFlight = 0
    private var hosts: [Origin: HostLine] = [:]
    /// The origins with calls waiting: the only ones a freed slot can go to.
    private var queuedHosts: [HostLine] = []
    /// The arrival number of the last call: the order within a priority. A call takes one at its first
    /// exchange and keeps it for its later ones (``RequestContext/queueArrival``).
    private var arrivals: UInt64 = 0
    /// How many origins ``hosts`` may hold before the idle ones are dropped.
    private var sweepThreshold = CallSlots.minimumSweepThreshold
    private static let minimumSweepThreshold = 64
    /// The origins of the requests' URLs, made once for a run of requests to one host.
    private let recentOrigin = RecentOrigin()
    /// The line ``line(for:)`` found last (dropped with the idle lines).
    private var lastLine: (origin: Origin, line: HostLine)?

    init(_ scheduling: Scheduling) {
        maximumCalls = scheduling.maximumCalls
        maximumCallsPerHost = scheduling.maximumCallsPerHost
    }

    /// Takes a slot for a request to `origin` if one is free, or whatever the limits when
    /// `bypassingLimits` (a token refresh); returns the origin's line (to give the slot back to), or `nil`
    /// when it took none. Calls that wait are never overtaken: while a slot is free for an origin, none of
    /// its calls waits. The first exchange of `context`'s call gives it its arrival number.
    func take(_ origin: Origin, for context: RequestContext? = nil, bypassingLimits: Bool = false) -> HostLine? {
        lock.lock()
        defer { lock.unlock() }
        if let context, context.queueArrival == 0 {
            arrivals += 1
            context.queueArrival = arrivals
        }
        let line = self.line(for: origin)
        guard bypassingLimits || (inFlight < maximumCalls && line.inFlight < maximumCallsPerHost) else { return nil }
        inFlight += 1
        line.inFlight += 1
        return line
    }

    /// Queues `waiter` for a slot of `origin`: `continuation` is resumed with the origin's line when it
    /// gets one, or throws the error it left the queue with (``abandon(_:because:)``). Returns whether the
    /// waiter was queued: not when a slot was free by now (resumed at once), nor when the waiter left
    /// before it was queued.
    func enqueue(_ waiter: SlotWaiter, for origin: Origin, continuation: UnsafeContinuation<HostLine, any Error>) -> Bool {
        enqueue(waiter, for: origin, resumption: .task(continuation))
    }

    /// Queues `waiter` for a slot of `origin`, to be resumed by `resumption` (see
    /// ``enqueue(_:for:continuation:)``), which may be resumed before this returns. `whenQueued` is called
    /// (with the lock held: it must be short and take no lock of ours) once the waiter is queued, before
    /// anything can resume it.
    func enqueue(_ waiter: SlotWaiter, for origin: Origin, resumption: SlotWaiter.Resumption, whenQueued: (() -> Void)? = nil) -> Bool {
        lock.lock()
        if let reason = waiter.leftBecause {
            lock.unlock()
            resumption.resume(with: .failure(reason))
            return false
        }
        let line = self.line(for: origin)
        if inFlight < maximumCalls, line.inFlight < maximumCallsPerHost {   // freed since `take`
            inFlight += 1
            line.inFlight += 1
            waiter.state = .granted
            lock.unlock()
            resumption.resume(with: .success(line))
            return false
        }
        if waiter.arrival == 0 {   // a waiter made without a call (the tests')
            arrivals += 1
            waiter.arrival = arrivals
        }
        waiter.resumption = resumption
        waiter.wasQueued = true
        waiter.line = line
        waiter.state = .queued
        line.append(waiter)
        if line.waiting == 1 { queuedHosts.append(line) }
        whenQueued?()
        lock.unlock()
        return true
    }

    /// Takes `waiter` out of the queue, at once, and resumes it throwing `reason` (its caller cancelled,
    /// or its deadline passed); it never takes a slot afterwards. Nothing happens if it already got one.
    func abandon(_ waiter: SlotWaiter, because reason: NetworkError) {
        lock.lock()
        switch waiter.state {
        case .arriving:
            waiter.state = .left(reason)   // ``enqueue`` throws it
            lock.unlock()
        case .queued:
            let resumption = waiter.resumption
            waiter.resumption = nil
            waiter.state = .left(reason)
            if let line = waiter.line {
                line.remove(waiter)
                if line.waiting == 0 { queuedHosts.removeAll { $0 === line } }
            }
            waiter.line = nil
            lock.unlock()
            resumption?.resume(with: .failure(reason))
        case .granted, .left:
            lock.unlock()
        }
    }

    /// Gives back a slot of `line`'s origin (its exchange ended), and hands it to the call that waits
    /// first, if any may take it. (A line with a slot taken is never dropped: no look-up here.)
    func release(_ line: HostLine) {
        lock.lock()
        inFlight -= 1
        line.inFlight -= 1
        let next = queuedHosts.isEmpty ? nil : grantNext()
        lock.unlock()
        if let next { next.resumption.resume(with: .success(next.line)) }
    }

    /// How many calls wait for a slot (for tests).
    var waitingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return queuedHosts.reduce(0) { $0 + $1.waiting }
    }

    /// How many requests hold a slot (for tests).
    var inFlightCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return inFlight
    }

    /// The waiter that takes the freed slot: the highest priority, then the earliest arrival, among the
    /// origins under their own limit; how to resume it and its line, once the lock is released. Call with
    /// `lock` held.
    private func grantNext() -> (resumption: SlotWaiter.Resumption, line: HostLine)? {
        guard inFlight < maximumCalls else { return nil }
        var chosen: (line: HostLine, waiter: SlotWaiter)?
        for line in queuedHosts where line.inFlight < maximumCallsPerHost {
            guard let head = line.first else { continue }
            if let best = chosen?.waiter, head.priority < best.priority || (head.priority == best.priority && head.arrival > best.arrival) {
                continue
            }
            chosen = (line, head)
        }
        guard let (line, waiter) = chosen else { return nil }
        line.removeFirst(waiter)
        if line.waiting == 0 { queuedHosts.removeAll { $0 === line } }
        inFlight += 1
        line.inFlight += 1
        waiter.state = .granted
        waiter.line = nil
        guard let resumption = waiter.resumption else { return nil }   // always set while queued
        waiter.resumption = nil
        return (resumption, line)
    }

    /// `origin`'s line, made when it has none. An app that talks to many origins does not keep one per
    /// origin forever: past ``sweepThreshold`` the idle ones are dropped (amortised O(1)). Call with
    /// `lock` held.
    private func line(for origin: Origin) -> HostLine {
        if let last = lastLine, last.origin == origin { return last.line }   // the same host as the last request: no hashing
        if let line = hosts[origin] {
            lastLine = (origin, line)
            return line
        }
        if hosts.count >= sweepThreshold {
            hosts = hosts.filter { !$0.value.isIdle }
            sweepThreshold = max(Self.minimumSweepThreshold, hosts.count * 2)
            lastLine = nil   // its line may be gone
        }
        let line = HostLine()
        hosts[origin] = line
        lastLine = (origin, line)
        return line
    }

    /// The origin of `url`, a request's (see ``RecentOrigin``).
    func origin(of url: URL) -> Origin {
        recentOrigin.origin(of: url)
    }
}
