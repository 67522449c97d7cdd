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
    /// An exchange this member starts takes its slot (see ``CallSlots``) with no task waiting for it: the
    /// exchange waits in the queue itself, in `send`'s call's place. The slot goes with the `URLSessionTask`,
    /// which gives it back when it completes. Its idle timeout starts with the task, after the wait. A frame of its own: inlined into
    /// its callers, it made their frame outgrow its task-allocator slab, and a waiting call held one more
    /// (6.15 KiB per queued call inlined, 6.00 not).
    @inline(never)
    func sharedTransfer(_ send: SharedSend, member: GroupMember) async throws -> (Data, HTTPURLResponse) {
        attemptWatch.watch(placed: member, until: member.deadline.expiry)
        defer { attemptWatch.unwatch(placed: member) }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<(Data, HTTPURLResponse), any Error>) in
                if case .started(let transfer) = callGroups.attach(member, send: send, by: self, continuation: continuation) { begin(transfer) }
            }
        } onCancel: { [callGroups] in
            callGroups.detach(member, with: .cancelled)
        }
    }

    /// Starts `transfer`: at once when a slot is free, else once the queue grants one. No task waits, and
    /// nothing is made for the wait: the exchange is its own waiter (``SharedTransfer``), resumed by
    /// ``slotGranted(to:_:)``.
    private func begin(_ transfer: SharedTransfer) {
        let send = transfer.send
        let origin = slotOrigin(of: send.request)
        if let line = slots.take(origin, for: send.context) {   // the usual case: no wait
            startTask(of: transfer, slot: CallSlot(line: line, slots: slots))
            return
        }
        transfer.arrival = send.context.queueArrival   // its starter's place, which `take` gave it (not queued yet: no lock)
        transfer.queuedAt = DispatchTime.now().uptimeNanoseconds
        let events = self.events
        // Taken out when every member left (``CallGroups``), even before it is queued: it is its own waiter.
        _ = slots.enqueue(
            transfer, for: origin, resumption: .exchange(transfer),
            whenQueued: events.isEmpty ? nil : { events.send { $0.queueWaitDidStart(origin: origin, context: send.context) } })
    }

    /// `transfer` waited in the queue (see ``begin(_:)``) and got its slot, or left with `result`'s error
    /// (every member left, ``SlotWaiter/leave(because:)``). Its wait is its starter's call's.
    func slotGranted(to transfer: SharedTransfer, _ result: Result<HostLine, NetworkError>) {
        if transfer.wasQueued {   // it was queued (told in begin): its wait ends
            let context = transfer.send.context
            let duration = DispatchTime(uptimeNanoseconds: transfer.queuedAt).secondsElapsed
            context.queueWait += duration
            if !events.isEmpty {
                let failure: (any Error)? = if case .failure(let error) = result { error } else { nil }
                events.send { $0.queueWaitDidEnd(duration: duration, error: failure, context: context) }
            }
        }
        switch result {
        // Granted on the thread that gave a slot back, which may be the session's delegate queue: the task
        // is made and resumed from another (on Linux that waits for the session's work queue).
        case .success(let line): SessionDelegateQueue.leave { [self] in startTask(of: transfer, slot: CallSlot(line: line, slots: slots)) }
        case .failure(let error): callGroups.finish(transfer, with: .failure(error))
        }
    }

    /// Makes and resumes the `URLSessionTask` of `transfer`, driven by the session delegate (see
    /// ``DelegateTransfer``), which hands its outcome to the members waiting.
    private func startTask(of transfer: SharedTransfer, slot: CallSlot) {
        let send = transfer.send
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

/// What a member sends through a shared exchange, and how its body is taken (see
/// ``NetworkProvider/sharedTransfer(_:member:)``). A class: the frames a member waits in hold one reference,
/// not its fields (10,000 calls queued behind a limit).
final class SharedSend: Sendable {
    let request: URLRequest
    /// The monitors are told its starter's attempt started (its first hop's). (After the request, in its
    /// padding, as `followsRedirects`: a queued call holds a send.)
    let tellsStart: Bool
    let followsRedirects: Bool
    /// The request's key in its group (see ``CallGroupKey``).
    let key: CallGroupKey
    /// The call of the member that sends it: its place in the queue, its priority.
    let context: RequestContext
    let limits: (delivery: Int, gathered: Int)
    let acceptable: Set<Int>

    init(
        _ request: URLRequest, key: CallGroupKey, context: RequestContext, limits: (delivery: Int, gathered: Int), acceptable: Set<Int>,
        followsRedirects: Bool, tellsStart: Bool
    ) {
        self.request = request
        self.key = key
        self.context = context
        self.limits = limits
        self.acceptable = acceptable
        self.followsRedirects = followsRedirects
        self.tellsStart = tellsStart
    }
}
