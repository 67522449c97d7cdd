import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Takes a slot for sending `request` under the provider's ``Scheduling`` limits, waiting in the queue
    /// when none is free; the slot goes with the exchange's task, which gives it back when it completes
    /// (see ``CallSlot``). Throws ``NetworkError/cancelled`` at once when the caller cancels while it
    /// waits, and ``NetworkError/deadlineExceeded(seconds:)`` when the call's deadline passes first: the
    /// deadline is the caller's budget and counts in the queue. The request's idle timeout does not: it
    /// starts with the task, after the wait.
    ///
    /// A token refresh never waits: its request (sent through the `network` its closure receives, or from
    /// the refresh's own task) takes a slot at once, over the limits if need be, since the calls holding
    /// the slots may be the very calls waiting for it. It still counts, so the others wait until the
    /// provider is back under its limits. Calls from tasks the refresh closure starts are not its request:
    /// they wait like any call (no slot is held while a call waits for a refresh, so they cannot deadlock).
    ///
    /// The call keeps its place in the queue across its exchanges: the first takes an arrival number
    /// (``RequestContext/queueArrival``), which its redirect hops, retries and resends reuse.
    func takeSlot(for request: URLRequest, context: RequestContext, deadline: Deadline) async throws -> CallSlot {
        let origin = slotOrigin(of: request)
        if let line = slots.take(origin, for: context) { return CallSlot(line: line, slots: slots) }
        let refreshes = context.refreshing != nil || RefreshRun.current?.isCurrentTaskRefreshing == true
        if refreshes, let line = slots.take(origin, bypassingLimits: true) { return CallSlot(line: line, slots: slots) }
        return CallSlot(line: try await waitForSlot(origin, context: context, deadline: deadline), slots: slots)
    }

    /// Waits in the queue for a slot of `origin`, telling the monitors, and adds the time waited to the
    /// call's ``CallReport/queueWait``.
    private func waitForSlot(_ origin: Origin, context: RequestContext, deadline: Deadline) async throws -> HostLine {
        if deadline.hasPassed { throw deadline.exceeded }
        let started = DispatchTime.now()
        let waiter = SlotWaiter(
            priority: context.endpoint.priority, arrival: context.queueArrival, slots: slots, deadlineSeconds: deadline.seconds)
        let (slots, events) = (self.slots, self.events)
        attemptWatch.watch(placed: waiter, until: deadline.expiry)
        defer { attemptWatch.unwatch(placed: waiter) }
        var (line, failure, queued): (HostLine?, (any Error)?, Bool) = (nil, nil, false)
        do {
            let granted = try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<HostLine, any Error>) in
                    queued = slots.enqueue(waiter, for: origin, continuation: continuation)
                    if queued, !events.isEmpty { events.send { $0.queueWaitDidStart(origin: origin, context: context) } }
                }
            } onCancel: {
                // A shared exchange is cancelled when its last caller left: by its deadline, that error.
                slots.abandon(waiter, because: deadline.hasPassed ? deadline.exceeded : .cancelled)
            }
            // Granted as the caller left or the deadline passed: the slot goes on to the next call, unused.
            if Task.isCancelled || deadline.hasPassed {
                slots.release(granted)
                throw deadline.hasPassed ? deadline.exceeded : NetworkError.cancelled
            }
            line = granted
        } catch {
            failure = error
        }
        let duration = started.secondsElapsed
        context.queueWait += duration
        if queued, !events.isEmpty { events.send { [failure] in $0.queueWaitDidEnd(duration: duration, error: failure, context: context) } }
        guard let line else { throw failure ?? NetworkError.cancelled }
        return line
    }

    /// Whether a call's first exchange may take its slot before the pipeline starts (see ``CallStart``):
    /// nothing can answer it but the network — no cache (``cache``), a policy that is not cache-only, no
    /// `only-if-cached` request (RFC 9111 §5.2.1.7) — and no interceptor, whose adapter may wait (a token
    /// refresh: no slot is held meanwhile) or send the request elsewhere; not a token refresh's own call
    /// (which never waits), nor a cancelled one (it ends as any call does, taking no slot).
    func takesSlotFirst(_ endpoint: some Endpoint, built: URLRequest, interceptor: (any RequestInterceptor)?) -> Bool {
        guard cache == nil, interceptor == nil, self.interceptor == nil else { return false }
        guard (endpoint.cachePolicy ?? cachePolicy).kind != .cacheOnly, !HTTPCaching.onlyIfCached(built) else { return false }
        return RefreshRun.current?.isRunning != true && !Task.isCancelled
    }

    /// Takes the slot of a call's first exchange before its pipeline starts, waiting in the queue in the
    /// caller's own task (a small frame: the pipeline's are made only once the slot is there). The monitors
    /// were told the request was built; the outcome — the slot, or the error the call left the queue with
    /// — goes to ``perform(_:interceptor:refreshing:mode:revalidating:start:)``, whose first attempt uses
    /// or throws it as its own wait's.
    func slotFirst(for built: URLRequest, context: RequestContext, deadline: Deadline, started: DispatchTime) async -> CallStart {
        let origin = slotOrigin(of: built)
        if let line = slots.take(origin, for: context) {
            return CallStart(context: context, started: started, first: .slot(CallSlot(line: line, slots: slots)))
        }
        do {
            let line = try await waitForSlot(origin, context: context, deadline: deadline)
            return CallStart(context: context, started: started, first: .slot(CallSlot(line: line, slots: slots)))
        } catch {
            return CallStart(context: context, started: started, first: .failed(error))
        }
    }

    /// The origin whose slots `request` takes.
    func slotOrigin(of request: URLRequest) -> Origin {
        request.url.map(slots.origin) ?? Self.unknownOrigin
    }

    /// The slot of a request without a URL (which URLSession fails at once): one origin for all of them.
    private static let unknownOrigin = Origin(URL(fileURLWithPath: "/"))
}

/// A slot taken for one exchange (see ``CallSlots``): its task's ``DelegateTransfer`` gives it back when
/// the task completes, whichever way it ends.
struct CallSlot: Sendable {
    /// The line of the origin whose limit it counts against.
    let line: HostLine
    let slots: CallSlots

    /// Gives the slot back; call once.
    func release() {
        slots.release(line)
    }
}

extension RequestPriority {
    /// The `URLSessionTask.priority` a call of this priority is sent with.
    var taskPriority: Float {
        switch self {
        case .low: return URLSessionTask.lowPriority
        case .normal: return URLSessionTask.defaultPriority
        case .high: return URLSessionTask.highPriority
        }
    }
}
