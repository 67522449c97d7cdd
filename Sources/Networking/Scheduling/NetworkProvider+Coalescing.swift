import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// ``response(_:interceptor:)``: a call that may share (``sharesExchange(_:interceptor:)``) enters the
    /// group of the identical calls in flight, or starts one (see ``CallGroups``), and runs its own pipeline,
    /// whose sends share the group's exchanges; any other call runs its own pipeline alone.
    ///
    /// Each caller's pipeline is its own, in its own task: its cache consultation first (a fresh hit never
    /// waits), adapt, validation, retriers, cache update; only the `URLSessionTask` is shared, and no task
    /// is made for it. Every caller gets its own ``Response`` (its report says whether it joined).
    ///
    /// A caller that waits keeps small frames only: the member is made by functions that have returned by
    /// then, and when nothing but the network can answer it (``takesSlotFirst(_:built:interceptor:)``) its
    /// first send is settled before its pipeline starts (see ``CallStart``: 10,000 calls queued behind a
    /// limit).
    @inline(__always)
    func coalescedResponse(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        if sharesExchange(endpoint, interceptor: interceptor) {
            if partitioning != nil { return try await accountResponse(endpoint) }
            // Without an account to ask, the member is made in a synchronous function: no async frame of it
            // makes the caller's task hold more while it waits.
            if let member = try sharingMember(for: endpoint) { return try await share(member, endpoint: endpoint) }
        }
        return try await soloResponse(endpoint, interceptor: interceptor)   // a body, or an account that cannot share
    }

    /// Builds the request of a call that may share, with no account (the provider's interceptor has none to
    /// tell, see ``accountMember(for:)``), and enters its group; `nil` when it may not share after all (it
    /// has a body, or its request has no key): it runs as a call of its own.
    @inline(never)
    private func sharingMember(for endpoint: some Endpoint) throws -> GroupMember? {
        let started = DispatchTime.now()
        let (built, body) = try builtRequestAndBody(for: endpoint)
        guard body == nil else { return nil }   // never shared: its own pipeline
        let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        guard let key = CallGroupKey(built, endpoint: endpoint, account: (nil, 0)) else { return nil }
        return callGroups.enter(key: key, account: (nil, 0), deadline: deadline, built: built, started: started)
    }

    /// ``coalescedResponse(_:interceptor:)`` of a call that may share when the provider's interceptor tells
    /// accounts (see ``accountEntry(for:)``): a function of its own, so that what it holds is in no frame of
    /// the calls without one (a frame past the task's first slab costs every waiting call another).
    @inline(never)
    private func accountResponse(_ endpoint: some Endpoint) async throws -> Response {
        switch try await accountEntry(for: endpoint) {
        case .member(let member): return try await share(member, endpoint: endpoint)
        case .alone(let built, let deadline, let started): return try await performBuilt(endpoint, built: built, deadline: deadline, started: started)
        case .withBody: return try await soloResponse(endpoint, interceptor: nil)
        }
    }

    /// How a call that may share, whose provider's interceptor tells accounts, goes on (see ``accountEntry(for:)``).
    private enum AccountEntry {
        /// It entered its group.
        case member(GroupMember)
        /// It runs its own pipeline with the request it built (no known account, or no key).
        case alone(URLRequest, Deadline, started: DispatchTime)
        /// It has a body after all: its own pipeline, which encodes it.
        case withBody
    }

    /// ``sharingMember(for:)`` when the provider's interceptor tells accounts (``CachePartitioning``): it is
    /// asked for the call's, and a call for no known account never shares (two users never share); such a
    /// call keeps the request it built for its own pipeline.
    @inline(never)
    private func accountEntry(for endpoint: some Endpoint) async throws -> AccountEntry {
        let started = DispatchTime.now()
        let (built, body) = try builtRequestAndBody(for: endpoint)
        guard body == nil else { return .withBody }   // never shared: its own pipeline
        let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        var account: (partition: String?, epoch: Int) = (nil, 0)
        if let partitioning {
            let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
            switch await partitioning.cachePartition(for: built, context: context) {
            case .notAuthenticated: break
            case .account(let stamp): account = (stamp.partition, stamp.value)
            case .unknownAccount: return .alone(built, deadline, started: started)   // authenticated for no known account
            }
        }
        guard let key = CallGroupKey(built, endpoint: endpoint, account: account) else { return .alone(built, deadline, started: started) }
        return .member(callGroups.enter(key: key, account: account, deadline: deadline, built: built, started: started))
    }

    /// The pipeline of a call that built its request already and shares nothing (see ``accountEntry(for:)``):
    /// it is not built again.
    @inline(never)
    private func performBuilt(_ endpoint: some Endpoint, built: URLRequest, deadline: Deadline, started: DispatchTime) async throws -> Response {
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline, mode.started) = (built, deadline, started)
        return try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode).response
    }

    /// A call that runs its own pipeline from its start; a function of its own, so that the pipeline's
    /// arguments are in no frame that waits in the queue.
    @inline(never)
    private func performAlone(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: TransferMode()).response
    }

    /// The call of `member`: its pipeline, whose sends share its group's exchanges; when nothing but the
    /// network can answer it, its first send is settled first, in a small frame (see ``firstSend(of:endpoint:)``).
    /// The group ends with its last member's call. Inlined into ``coalescedResponse(_:interceptor:)``: one
    /// frame less, which saves a task-allocator slab per waiting call.
    @inline(__always)
    private func share(_ member: GroupMember, endpoint: some Endpoint) async throws -> Response {
        defer { callGroups.leave(member) }
        if member.joined, !events.isEmpty { tellJoined(member, endpoint: endpoint) }
        let settlesFirst = takesSlotFirst(endpoint, built: member.built, interceptor: nil) && connectivity.isOnline
        let start = settlesFirst ? await firstSend(of: member, endpoint: endpoint) : nil
        let response = try await performShared(endpoint, member: member, start: start)
        return member.joined ? Self.joined(response) : response
    }

    /// Tells the monitors that `member`'s call joined a call in flight.
    @inline(never)
    private func tellJoined(_ member: GroupMember, endpoint: some Endpoint) {
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        events.send { [shown = shown(member.built)] in $0.callDidJoin(shown, context: context) }
    }

    /// `response` of a call that joined another (``CallReport/joinedExistingCall``).
    private static func joined(_ response: Response) -> Response {
        var response = response
        var report = response.report
        report.joinedExistingCall = true
        response.storedReport = report
        return response
    }

    /// The first send of `member`, before its pipeline: the request as built (no interceptor, no cache),
    /// shared with its group (see ``CallGroups``); the wait — for a slot, for the answer — happens here, in
    /// a small frame. The monitors are told the request was built. Inlined into ``share(_:endpoint:)``: a
    /// frame of its own would hold a task-allocator slab more per waiting call.
    @inline(__always)
    private func firstSend(of member: GroupMember, endpoint: some Endpoint) async -> CallStart {
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        let built = member.built
        if !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
        do {
            try serverTrust.checkEnforceable(built.url)   // fails closed where pins cannot be enforced, before it is sent
            let limit = endpoint.maximumResponseSize ?? maximumResponseSize
            let (data, response) = try await sharedTransfer(
                built, key: member.group.key, member: member, context: context, limits: (limit, limit), acceptable: [],
                followsRedirects: (endpoint.redirectBehavior ?? redirectBehavior).follows, tellsStart: true)
            return CallStart(context: context, started: member.started, first: .answered(data, response))
        } catch {
            return CallStart(context: context, started: member.started, first: .failed(Self.normalize(error)))
        }
    }

    /// The pipeline of `member`'s call (`start`: its first send was settled before it).
    @inline(never)
    private func performShared(_ endpoint: some Endpoint, member: GroupMember, start: CallStart?) async throws -> Response {
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline, mode.member) = (member.built, member.deadline, member)
        return try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode, start: start).response
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
