import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Sends `request` (whose key is `key`) for `member`'s call, sharing its group's exchange of it (see
    /// ``CallGroups``): the body gathered in memory, and the response, which may be a redirect (each member
    /// follows it with a send of its own, shared too). The member waits with a continuation of its own:
    /// cancelled, or at its own deadline, it leaves at once; the `URLSessionTask` is cancelled when the last
    /// member waiting for it left.
    ///
    /// An exchange this member starts takes its slot (see ``CallSlots``) with no task waiting for it, in
    /// `context`'s place in the queue; the slot goes with the `URLSessionTask`, which gives it back when it
    /// completes. Its idle timeout starts with the task, after the wait. A frame of its own: inlined into
    /// its callers, it made their frame outgrow its task-allocator slab, and a waiting call held one more
    /// (6.15 KiB per queued call inlined, 6.00 not).
    @inline(never)
    func sharedTransfer(
        _ request: URLRequest,
        key: CallGroupKey,
        member: GroupMember,
        context: RequestContext,
        limits: (delivery: Int, gathered: Int),
        acceptable: Set<Int>,
        followsRedirects: Bool,
        tellsStart: Bool
    ) async throws -> (Data, HTTPURLResponse) {
        let (callGroups, attemptWatch) = (self.callGroups, self.attemptWatch)
        attemptWatch.watch(member, until: member.deadline.expiry)
        defer { attemptWatch.unwatch(member) }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<(Data, HTTPURLResponse), any Error>) in
                if case .started(let transfer) = callGroups.attach(member, key: key, continuation: continuation) {
                    begin(
                        transfer,
                        SharedSend(
                            request: request, context: context, limits: limits, acceptable: acceptable, followsRedirects: followsRedirects,
                            tellsStart: tellsStart))
                }
            }
        } onCancel: {
            callGroups.detach(member, with: .cancelled)
        }
    }

    /// Starts `transfer`: at once when a slot is free, else once the queue grants one (no task waits).
    private func begin(_ transfer: SharedTransfer, _ send: SharedSend) {
        if let slot = freeSlot(for: send.request, context: send.context) {   // the usual case: no waiter, no callback
            startTask(of: transfer, send, slot: slot)
            return
        }
        let callGroups = self.callGroups
        let (slot, waiter) = sharedSlot(for: send.request, context: send.context) { [self] result in
            switch result {
            // Granted on the thread that gave a slot back, which may be the session's delegate queue: the task
            // is made and resumed from another (on Linux that waits for the session's work queue).
            case .success(let slot): SessionDelegateQueue.leave { [self] in startTask(of: transfer, send, slot: slot) }
            case .failure(let error): callGroups.finish(transfer, with: .failure(error))
            }
        }
        if let slot {
            startTask(of: transfer, send, slot: slot)
        } else if let waiter {
            callGroups.queued(transfer, waiter: waiter)
        }
    }

    /// Makes and resumes the `URLSessionTask` of `transfer`, driven by the session delegate (see
    /// ``DelegateTransfer``), which hands its outcome to the members waiting.
    private func startTask(of transfer: SharedTransfer, _ send: SharedSend, slot: CallSlot) {
        let handle = TaskHandle()
        let callGroups = self.callGroups
        let delegateTransfer = DelegateTransfer(
            delivery: .buffer, acceptable: send.acceptable, followsRedirects: send.followsRedirects, deliveryLimit: send.limits.delivery,
            gatherLimit: send.limits.gathered, request: send.request, progress: nil, uploadSize: 0, handle: handle, slot: slot,
            onStream: nil,
            onComplete: { data, response, error, state, _ in
                let outcome = Self.outcome(data: data, response: response, error: error, state: state, handle: handle, deadline: Self.noDeadline)
                callGroups.finish(transfer, with: outcome)
            })
        let task = urlSession.dataTask(with: send.request)
        let priority = send.context.endpoint.priority
        if priority != .normal { task.priority = priority.taskPriority }
        delegate.register(delegateTransfer, for: task, context: send.context)
        if send.tellsStart, !events.isEmpty {   // its starter's attempt started (the others share it: told they joined)
            events.send { [request = shown(send.request), context = send.context] in $0.taskDidStart(request, context: context) }
        }
        callGroups.started(transfer, handle: handle)
        handle.start(task)
    }

    /// A shared exchange's: none (its members watch their own).
    private static let noDeadline = Deadline(seconds: .infinity, expiry: nil)
}

/// What a shared exchange sends, and how its body is taken (see ``NetworkProvider/sharedTransfer(_:key:member:context:limits:acceptable:followsRedirects:tellsStart:)``).
private struct SharedSend: Sendable {
    let request: URLRequest
    /// The call of the member that started it: its place in the queue, its priority.
    let context: RequestContext
    let limits: (delivery: Int, gathered: Int)
    let acceptable: Set<Int>
    let followsRedirects: Bool
    /// The monitors are told its starter's attempt started (its first hop's).
    let tellsStart: Bool
}
