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
        let origin = request.url.map(Origin.init) ?? Self.unknownOrigin
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
        attemptWatch.watch(waiter, until: deadline.expiry)
        defer { attemptWatch.unwatch(waiter) }
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
