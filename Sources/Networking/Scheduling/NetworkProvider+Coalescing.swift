import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// ``response(_:interceptor:)``: a call that may share an exchange (``sharesExchange(_:interceptor:)``)
    /// joins the identical call in flight, or starts the exchange others may join (see ``CallGroups``);
    /// any other call runs its own pipeline.
    ///
    /// The shared exchange is the whole pipeline run of the first caller's endpoint (its cache
    /// consultation, adapt, send, validate, retry, the token refresh and resend after a 401, the cache's
    /// update). Every caller gets the outcome as its own value: the same ``Response`` (its report says
    /// whether it joined, and its own duration) or the same error; each decodes it itself.
    ///
    /// A caller that waits keeps small frames only: the request is built, the account asked and the group
    /// entered by functions that have returned by then (see ``CallStart`` for why it matters: 10,000 calls
    /// queued behind a limit), and this one has two calls that return a ``Response`` (each takes room in
    /// its frame, which stays while it waits).
    @inline(__always)
    func coalescedResponse(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        if sharesExchange(endpoint, interceptor: interceptor) {
            // Without an account to ask, the caller is made in a synchronous function: no async frame of it
            // makes the caller's task hold more while it waits.
            let caller = self.interceptor is any CachePartitioning ? try await accountCaller(for: endpoint) : try sharingCaller(for: endpoint)
            if let caller { return try await share(caller, endpoint: endpoint) }
        }
        return try await soloResponse(endpoint, interceptor: interceptor)   // a body, or an account that cannot share
    }

    /// Builds the request of a call that may share, with no account (the provider's interceptor has none to
    /// tell, see ``accountCaller(for:)``): the caller; `nil` when it may not share after all (it has a
    /// body, or its request has no key): it runs as a call of its own.
    @inline(never)
    private func sharingCaller(for endpoint: some Endpoint) throws -> CallWaiter? {
        let started = DispatchTime.now()
        let (built, body) = try builtRequestAndBody(for: endpoint)
        guard body == nil else { return nil }   // never shared: its own pipeline
        let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        guard let key = CallGroupKey(built, endpoint: endpoint, account: (nil, 0)) else { return nil }
        return CallWaiter(groups: callGroups, deadline: deadline, built: built, started: started, context: nil, key: key)
    }

    /// ``sharingCaller(for:)`` when the provider's interceptor tells accounts (``CachePartitioning``): it is
    /// asked for the call's, and a call for no known account never shares (two users never share).
    @inline(never)
    private func accountCaller(for endpoint: some Endpoint) async throws -> CallWaiter? {
        let started = DispatchTime.now()
        let (built, body) = try builtRequestAndBody(for: endpoint)
        guard body == nil else { return nil }   // never shared: its own pipeline
        let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        var account: (partition: String?, epoch: Int) = (nil, 0)
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        if let partitioning = self.interceptor as? any CachePartitioning {
            switch await partitioning.cachePartition(for: built, context: context) {
            case .notAuthenticated: break
            case .account(let stamp): account = (stamp.partition, stamp.value)
            case .unknownAccount: return nil   // authenticated for no known account
            }
        }
        guard let key = CallGroupKey(built, endpoint: endpoint, account: account) else { return nil }
        return CallWaiter(groups: callGroups, deadline: deadline, built: built, started: started, context: context, key: key)
    }

    /// A call that runs its own pipeline from its start; a function of its own, so that the pipeline's
    /// arguments are in no frame that waits in the queue.
    @inline(never)
    private func performAlone(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: TransferMode()).response
    }

    /// `caller` joins the group of its key, or starts it, and waits for the shared outcome. What it holds
    /// while it waits is `caller` (see ``CallStart``): the rest is done by functions that return. Inlined
    /// into ``coalescedResponse(_:interceptor:)``: one frame less, which saves a task-allocator slab (984
    /// bytes) per waiting call.
    @inline(__always)
    private func share(_ caller: CallWaiter, endpoint: some Endpoint) async throws -> Response {
        // Each caller watches its own deadline (it leaves when it passes, even before it entered); the
        // shared exchange has none of its own (see CallGroups), only its callers' latest for retry delays.
        attemptWatch.watch(caller, until: caller.expiry)
        defer { attemptWatch.unwatch(caller) }
        do {
            return joinedCallEnded(
                caller,
                with: try await withTaskCancellationHandler {
                    try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Response, any Error>) in
                        enter(caller, endpoint: endpoint, continuation: continuation)
                    }
                } onCancel: { [callGroups] in
                    callGroups.leave(caller, with: NetworkError.cancelled)
                })
        } catch {
            throw await callEnded(caller, throwing: error)
        }
    }

    /// `response` as `caller` gets it: when it joined, with its own duration (the exchange's waits at most
    /// as long as the joined call itself lasted: it may have joined while the exchange waited), and its
    /// end told.
    private func joinedCallEnded(_ caller: CallWaiter, with response: Response) -> Response {
        guard caller.joined else { return response }
        let duration = caller.started.secondsElapsed
        var response = response
        var report = response.report
        report.joinedExistingCall = true
        report.duration = duration
        report.queueWait = min(report.queueWait, duration)
        report.connectivityWait = min(report.connectivityWait, duration)
        response.storedReport = report
        reportJoinedCallEnd(caller.built, result: .success(response), duration: duration, context: caller.context)
        return response
    }

    /// `error` as `caller` throws it. The starter that left last (cancelled, or its deadline passed) waits
    /// for the exchange it cancelled, which ends at once: that exchange's events are its call's, told before
    /// the call returns. A function of its own, so that the frame that waits holds nothing for it.
    @inline(never)
    private func callEnded(_ caller: CallWaiter, throwing error: any Error) async -> any Error {
        if !caller.joined, let exchange = callGroups.exchange(leftLastBy: caller) { await exchange.value }
        return joinedCallEnded(caller, throwing: error)
    }

    /// `error` as `caller` throws it, its end told when it joined.
    private func joinedCallEnded(_ caller: CallWaiter, throwing error: any Error) -> any Error {
        guard caller.joined else { return error }
        reportJoinedCallEnd(caller.built, result: .failure(error), duration: caller.started.secondsElapsed, context: caller.context)
        return error
    }

    /// Tells the monitors that a call that joined another ended.
    private func reportJoinedCallEnd(_ built: URLRequest, result: Result<Response, any Error>, duration: TimeInterval, context: RequestContext?) {
        guard !events.isEmpty, let context else { return }
        var attempts = 0   // the shared exchange's; none told for a caller that left first
        if case .success(let response) = result { attempts = response.report.attempts }
        events.send { [shown = shown(built), attempts] in
            $0.requestDidFinish(shown, result: result, attempts: attempts, duration: duration, context: context)
        }
    }

    /// `caller` enters its group: it starts it (see ``start(_:endpoint:caller:)``) or joins the exchange in
    /// flight (the monitors told).
    @inline(never)
    private func enter(_ caller: CallWaiter, endpoint: some Endpoint, continuation: UnsafeContinuation<Response, any Error>) {
        switch callGroups.enter(caller, key: caller.key, continuation: continuation) {
        case .started(let group):
            start(group, endpoint: endpoint, caller: caller)
        case .joined:
            caller.joined = true
            if !events.isEmpty {
                let joining = caller.context ?? RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
                caller.context = joining
                events.send { [shown = shown(caller.built)] in $0.callDidJoin(shown, context: joining) }
            }
        case .left:
            break
        }
    }

    /// Whether a call to `endpoint` may share an exchange: a `GET` or `HEAD` (RFC 9110 §9.2.1: safe, so
    /// one exchange answers all), coalescing on for the endpoint (or, when it does not say, the provider),
    /// no interceptor of its own (it could make the request or its outcome another), not made by a token
    /// refresh (its answer holds tokens), and not cancelled already (it ends as a call of its own does).
    /// Streams, downloads, uploads and cached-then-fresh calls never come here.
    private func sharesExchange(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) -> Bool {
        guard interceptor == nil, endpoint.coalescesIdenticalCalls ?? scheduling.coalescesIdenticalCalls else { return false }
        guard endpoint.method == .get || endpoint.method == .head else { return false }
        return RefreshRun.current?.isRunning != true && !Task.isCancelled
    }

    /// Starts the exchange of `group`, which a caller just made. When nothing but the network can answer
    /// it (``takesSlotFirst(_:built:interceptor:)``), the group waits for the slot of its first request
    /// and the exchange's task is made only once it has one: a queued group is its callers' own small
    /// waits and a ``SlotWaiter``, no task of its own. Cancelling every caller takes the waiter out of the
    /// queue at once (``CallGroups/leave(_:with:)``); the callers that join never need a slot. The exchange
    /// and its waiter have no deadline of their own (see ``CallGroups``): only its callers' latest, for
    /// retry delays; its error is in the starter's seconds.
    private func start(_ group: CallGroup, endpoint: some Endpoint, caller: CallWaiter) {
        let built = caller.built
        guard takesSlotFirst(endpoint, built: built, interceptor: nil) else {
            callGroups.attach(startExchange(of: group, endpoint: endpoint, mode: Self.exchangeMode(of: group, startedBy: caller)), to: group)
            return
        }
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        if !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
        if let slot = freeSlot(for: built, context: context) {   // the usual case: no waiter, no callback to make
            let start = CallStart(context: context, started: caller.started, slot: .success(slot))
            let mode = Self.exchangeMode(of: group, startedBy: caller)
            callGroups.attach(startExchange(of: group, endpoint: endpoint, mode: mode, start: start), to: group)
            return
        }
        let callGroups = self.callGroups
        let deadline = Self.exchangeMode(of: group, startedBy: caller).deadline ?? caller.deadline
        // The callback keeps the caller, not the exchange's mode: a queued group holds little.
        let (start, waiter) = slotFirst(for: built, context: context, deadline: deadline, started: caller.started) { [self] start in
            // Granted from the queue (on the thread that gave a slot back), or it left the queue: a task now.
            let mode = Self.exchangeMode(of: group, startedBy: caller)
            callGroups.attach(Task { await runExchange(of: group, endpoint: endpoint, mode: mode, start: start) }, to: group)
        }
        if let start {
            callGroups.attach(startExchange(of: group, endpoint: endpoint, mode: Self.exchangeMode(of: group, startedBy: caller), start: start), to: group)
        } else if let waiter {
            callGroups.queue(waiter, for: group)
        }
    }

    /// How the exchange of `group`, which `caller` started, runs: its request as the caller built it, and
    /// no deadline of its own (see ``CallGroups``): only its callers' latest, for retry delays; its error
    /// in the starter's seconds.
    private static func exchangeMode(of group: CallGroup, startedBy caller: CallWaiter) -> TransferMode {
        var deadline = Deadline(seconds: caller.seconds, expiry: nil)
        deadline.callers = group.callers
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline) = (caller.built, deadline)
        return mode
    }

    /// The task that runs the exchange of `group`: a task of its own, so that the caller that started it may
    /// leave (cancelled) while the others wait on. Where the runtime has `Task.immediate` (Swift 6.2: Linux,
    /// Apple platforms from their 26 releases) it runs at once on the caller's thread until it first
    /// suspends, as the call itself would have: a busy executor does not delay its start (a call's deadline
    /// counts from the call).
    private func startExchange(of group: CallGroup, endpoint: some Endpoint, mode: TransferMode, start: CallStart? = nil) -> Task<Void, Never> {
        #if compiler(>=6.2)
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                return Task.immediate { [self] in await runExchange(of: group, endpoint: endpoint, mode: mode, start: start) }
            }
        #endif
        return Task { [self] in await runExchange(of: group, endpoint: endpoint, mode: mode, start: start) }
    }

    /// Runs the exchange of `group` and hands its outcome to the callers. `start`: its first request's
    /// slot was taken first.
    private func runExchange(of group: CallGroup, endpoint: some Endpoint, mode: TransferMode, start: CallStart?) async {
        let outcome: Result<Response, any Error>
        do {
            outcome = .success(try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode, start: start).response)
        } catch {
            outcome = .failure(error)
        }
        callGroups.finish(group, with: outcome)
    }

    /// A call that shares no exchange. When nothing but the network can answer it
    /// (``takesSlotFirst(_:built:interceptor:)``), it waits for its slot here, in a small frame, before its
    /// pipeline starts (see ``CallStart``); otherwise the pipeline runs at once (its cache first: a fresh
    /// hit never waits), and its attempts take their slots.
    @inline(never)
    private func soloResponse(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        guard cache == nil, interceptor == nil, self.interceptor == nil else {
            return try await performAlone(endpoint, interceptor: interceptor)
        }
        let started = DispatchTime.now()
        let (built, body, deadline): (URLRequest, RequestBody.Encoded?, Deadline)
        do {
            (built, body) = try builtRequestAndBody(for: endpoint)
            deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        } catch {   // the pipeline fails it as it fails any call
            return try await performAlone(endpoint, interceptor: interceptor)
        }
        var bodyFile: URL?
        switch body {
        case .file(let file, _)?: bodyFile = file
        case .spooled?: return try await performAlone(endpoint, interceptor: interceptor)
        case .inline?, nil: break
        }
        guard takesSlotFirst(endpoint, built: built, interceptor: nil) else {
            return try await performAlone(endpoint, interceptor: interceptor)
        }
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        if !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
        let start = await slotFirst(for: built, context: context, deadline: deadline, started: started)
        return try await performStarted(endpoint, start: start, built: built, deadline: deadline, bodyFile: bodyFile)
    }

    /// The pipeline of a call that took its first slot before it (see ``soloResponse(_:interceptor:)``):
    /// a function of its own, so that the pipeline's arguments are not in the frame that waits.
    @inline(never)
    private func performStarted(_ endpoint: some Endpoint, start: CallStart, built: URLRequest, deadline: Deadline, bodyFile: URL?) async throws
        -> Response
    {
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline, mode.bodyFile) = (built, deadline, bodyFile)
        return try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode, start: start).response
    }
}
