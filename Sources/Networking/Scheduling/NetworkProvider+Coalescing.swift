import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// ``response(_:interceptor:)``: the call enters (``enter(_:interceptor:into:)``), then runs its
    /// pipeline (``respond(_:interceptor:entry:)``). A call that may share (``sharing(_:interceptor:)``)
    /// enters the group of the identical calls in flight, or starts one (see ``CallGroups``), and runs its
    /// own pipeline, whose sends share the group's exchanges; any other call runs its own pipeline alone.
    ///
    /// Each caller's pipeline is its own, in its own task: its cache consultation first (a fresh hit never
    /// waits), adapt, validation, retriers, cache update; only the `URLSessionTask` is shared, and no task
    /// is made for it. Every caller gets its own ``Response`` (its report says whether it joined).
    ///
    /// A caller that waits keeps small frames only: when nothing but the network can answer it
    /// (``takesSlotFirst(_:built:interceptor:)``) its first send is settled while it enters (see
    /// ``CallStart``), and what it settled is written into `entry`, the caller's: no result of its own is
    /// kept in a frame that waits, and the pipeline's frames are made once the entry returned (10,000 calls
    /// queued behind a limit).
    @inline(never)
    func enter(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, into entry: inout CallEntry) async throws {
        switch sharing(endpoint, interceptor: interceptor) {
        case .withAccount: return try await enterWithAccount(endpoint, into: &entry)
        case .withoutAccount:
            // Without an account to ask, the member is made in a synchronous function: no async frame of it
            // makes the caller's task hold more while it waits.
            if let member = try sharingMember(for: endpoint) { return await enterShared(member, endpoint: endpoint, into: &entry) }
        case .none: break
        }
        await enterAlone(endpoint, interceptor: interceptor, into: &entry)   // a body, or an account that cannot share
    }

    /// The pipeline of a call that entered (``enter(_:interceptor:into:)``), from what it settled there.
    @inline(never)
    func respond(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, entry: inout CallEntry) async throws -> Response {
        switch entry {
        case .alone:
            return try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: TransferMode()).response
        case .built(let built, let deadline, let started):
            return try await performBuilt(endpoint, built: built, deadline: deadline, started: started)
        case .started(let start, let built, let deadline, let bodyFile):
            return try await performStarted(endpoint, start: start, built: built, deadline: deadline, bodyFile: bodyFile)
        case .shared(let member, let start):
            defer { callGroups.leave(member) }   // the group ends with its last member's call
            let response = try await performShared(endpoint, member: member, start: start)
            return member.joined ? Self.joined(response) : response
        }
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
        return callGroups.enter(key: key, deadline: deadline, built: built, started: started)
    }

    /// ``enter(_:interceptor:into:)`` of a call that may share when the provider's interceptor tells
    /// accounts (see ``accountEntry(for:)``): a function of its own, so that what it holds is in no frame of
    /// the calls without one (a frame past the task's slab costs every waiting call another).
    @inline(never)
    private func enterWithAccount(_ endpoint: some Endpoint, into entry: inout CallEntry) async throws {
        switch try await accountEntry(for: endpoint) {
        case .member(let member): await enterShared(member, endpoint: endpoint, into: &entry)
        case .alone(let built, let deadline, let started): entry = .built(built, deadline, started: started)
        case .withBody: entry = .alone   // its own pipeline, which encodes it
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
        return .member(callGroups.enter(key: key, deadline: deadline, built: built, started: started))
    }

    /// The pipeline of a call that built its request already and shares nothing (see ``accountEntry(for:)``):
    /// it is not built again. A frame of its own, as the two below: inlined, each made ``respond(_:interceptor:entry:)``'s
    /// frame hold a transfer mode of its own (3 KB instead of 1), which a call that waits in its pipeline —
    /// one with an interceptor — holds while it is queued.
    @inline(never)
    private func performBuilt(_ endpoint: some Endpoint, built: URLRequest, deadline: Deadline, started: DispatchTime) async throws -> Response {
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline, mode.started) = (built, deadline, started)
        return try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode).response
    }

    /// Enters `member`'s call: when nothing but the network can answer it, its first send — the request as
    /// built (no interceptor, no cache), shared with its group (see ``CallGroups``) — is settled here; its
    /// pipeline (``respond(_:interceptor:entry:)``) leaves the group when the call ends. The wait — for a
    /// slot, for the answer — happens here, in a small frame: what the send needs is made by
    /// ``firstSharedSend(of:endpoint:)``, a synchronous function that has returned by then.
    @inline(never)
    private func enterShared(_ member: GroupMember, endpoint: some Endpoint, into entry: inout CallEntry) async {
        switch firstSharedSend(of: member, endpoint: endpoint) {
        case .inPipeline: entry = .shared(member, start: nil)
        case .failed(let start): entry = .shared(member, start: start)
        case .send(let send):
            let first: FirstSend
            do {
                let (data, response) = try await sharedTransfer(send, member: member)
                first = .answered(data, response)
            } catch {
                first = .failed(Self.normalize(error))
            }
            entry = .shared(member, start: CallStart(context: send.context, started: member.started, first: first))
        }
    }

    /// How `member`'s first send goes (see ``enterShared(_:endpoint:into:)``): in its pipeline, unless nothing
    /// but the network can answer it; then the monitors are told its request was built, and it is sent
    /// shared, or fails at once where pins cannot be enforced (before it is sent).
    @inline(never)
    private func firstSharedSend(of member: GroupMember, endpoint: some Endpoint) -> FirstSharedSend {
        if member.joined, !events.isEmpty { tellJoined(member, endpoint: endpoint) }
        let built = member.built
        guard takesSlotFirst(endpoint, built: built, interceptor: nil), connectivity.isOnline else { return .inPipeline }
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        if !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
        do {
            try serverTrust.checkEnforceable(built.url)
        } catch {
            return .failed(CallStart(context: context, started: member.started, first: .failed(Self.normalize(error))))
        }
        let limit = endpoint.maximumResponseSize ?? maximumResponseSize
        return .send(
            SharedSend(
                built, key: member.group.key, context: context, limits: (limit, limit), acceptable: [],
                followsRedirects: (endpoint.redirectBehavior ?? redirectBehavior).follows, tellsStart: true))
    }

    /// A member's first send (see ``firstSharedSend(of:endpoint:)``).
    private enum FirstSharedSend {
        /// Its pipeline sends it: something but the network may answer (a cache, an interceptor), or it is offline.
        case inPipeline
        /// It is sent shared before the pipeline starts.
        case send(SharedSend)
        /// It failed before it was sent.
        case failed(CallStart)
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
    ///
    /// Synchronous and a frame of its own: what it reads (the task-local refresh, the provider's
    /// partitioning) is then in no frame a queued call waits in.
    @inline(never)
    private func sharing(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) -> Sharing {
        guard interceptor == nil, endpoint.coalescesIdenticalCalls ?? scheduling.coalescesIdenticalCalls else { return .none }
        guard endpoint.method == .get || endpoint.method == .head else { return .none }
        guard RefreshRun.current?.isRunning != true, !Task.isCancelled else { return .none }
        return partitioning == nil ? .withoutAccount : .withAccount
    }

    /// Whether a call may share an exchange (see ``sharing(_:interceptor:)``), and how its group is found.
    private enum Sharing {
        /// It never shares.
        case none
        /// It may, and the provider's interceptor tells the account it is sent for (``CachePartitioning``).
        case withAccount
        /// It may, and there is no account to ask for.
        case withoutAccount
    }

    /// Enters a call that shares no exchange. When nothing but the network can answer it
    /// (``takesSlotFirst(_:built:interceptor:)``), it waits for its slot here, in a small frame, before its
    /// pipeline starts (see ``CallStart``); otherwise `entry` stays ``CallEntry/alone``: the pipeline runs at
    /// once (its cache first: a fresh hit never waits), and its attempts take their slots.
    @inline(never)
    private func enterAlone(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, into entry: inout CallEntry) async {
        guard cache == nil, interceptor == nil, self.interceptor == nil else { return }
        let started = DispatchTime.now()
        let (built, body, deadline): (URLRequest, RequestBody.Encoded?, Deadline)
        do {
            (built, body) = try builtRequestAndBody(for: endpoint)
            deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
        } catch {   // the pipeline fails it as it fails any call
            return
        }
        var bodyFile: URL?
        switch body {
        case .file(let file, _)?: bodyFile = file
        case .spooled?: return
        case .inline?, nil: break
        }
        guard takesSlotFirst(endpoint, built: built, interceptor: nil) else { return }
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil)
        if !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
        let start = await slotFirst(for: built, context: context, deadline: deadline, started: started)
        entry = .started(start, built: built, deadline: deadline, bodyFile: bodyFile)
    }

    /// The pipeline of a call that took its first slot before it (see ``enterAlone(_:interceptor:into:)``).
    @inline(never)
    private func performStarted(_ endpoint: some Endpoint, start: CallStart, built: URLRequest, deadline: Deadline, bodyFile: URL?) async throws
        -> Response
    {
        var mode = TransferMode()
        (mode.prebuilt, mode.deadline, mode.bodyFile) = (built, deadline, bodyFile)
        return try await perform(endpoint, interceptor: nil, refreshing: nil, mode: mode, start: start).response
    }
}

/// What a call settled as it entered (see ``NetworkProvider/enter(_:interceptor:into:)``), for its pipeline.
enum CallEntry {
    /// It runs its own pipeline from its start, which builds its request.
    case alone
    /// It built its request already and shares nothing (its account is unknown, or its request has no key).
    case built(URLRequest, Deadline, started: DispatchTime)
    /// It took its first slot, or left the queue, before its pipeline (see ``CallStart``). Boxed: the
    /// entry is kept in the frame a queued call waits in, the size of its largest case.
    indirect case started(CallStart, built: URLRequest, deadline: Deadline, bodyFile: URL?)
    /// It is a member of a group of identical calls; `start`: its first send was settled already.
    case shared(GroupMember, start: CallStart?)
}
