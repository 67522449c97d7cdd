import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Sends one call, its body handled as `mode` says: the pipeline every public call goes through.
    /// `revalidating`: the call is the background revalidation of the entry under that key (no caller waits
    /// for it). `start`: the call took its first exchange's slot before (see ``CallStart``), its request
    /// built as `mode.prebuilt` and told to the monitors.
    func perform(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        refreshing: UUID?,
        mode: TransferMode,
        revalidating: CacheKey? = nil,
        start: CallStart? = nil
    ) async throws -> (response: Response, delivered: DeliveredBody?) {
        let started = start?.started ?? mode.started ?? DispatchTime.now()
        let context =
            start?.context ?? RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: refreshing, revalidatedKey: revalidating)
        var first = start?.first   // the first attempt's, until it takes it
        defer { first?.releaseUnused() }   // the call ended before it sent: unused
        var sent: URLRequest?
        var statuses: [Int?] = []   // one per attempt: its status, or nil when none came
        var hops: [RedirectHop] = []
        var spooled: URL?
        var cacheUse: CacheUse?
        var revalidatedBehind: CacheKey?   // a stale-while-revalidate answer's entry (RFC 5861 §3)
        var waited: TimeInterval = 0   // for the network (see Connectivity)
        defer { if let spooled { try? FileManager.default.removeItem(at: spooled) } }   // our temporary copy; nothing to report
        defer {
            // Started once the caller's events are queued (its cache answer and end, or its validation failure and
            // end): the revalidation's come after them. Whether the endpoint accepted the stale answer or not.
            if let key = revalidatedBehind { revalidateInBackground(endpoint, interceptor: interceptor, key: key, sizeLimit: mode.sizeLimit) }
        }
        do {
            let deadline = try mode.deadline ?? Deadline(seconds: endpoint.deadline ?? self.deadline)
            var (built, body): (URLRequest, RequestBody.Encoded?) = try mode.prebuilt.map { ($0, nil) } ?? builtRequestAndBody(for: endpoint)
            var mode = mode
            switch body {
            case .file(let file, _)?:
                mode.bodyFile = file
            case .spooled(let form)?:
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("networking-\(UUID().uuidString).multipart")
                spooled = file
                let (contentType, length) = try await form.spool(to: file)
                built.setHeaderFields(["Content-Type": contentType, "Content-Length": String(length)])   // the boundary always wins over an endpoint's type
                mode.bodyFile = file
            case .inline?, nil:
                break
            }
            sent = built
            if start == nil, !events.isEmpty { events.send { [shown = shown(built)] in $0.requestDidBuild(shown, context: context) } }
            let chain = chain(with: interceptor)
            var request = built
            if cache != nil || (mode.cachePolicy ?? endpoint.cachePolicy ?? cachePolicy).kind == .cacheOnly || HTTPCaching.onlyIfCached(built) {
                first.take()?.releaseUnused()   // the cache may answer: the slot waits for a miss
                switch try await consultCacheAnswering(built, for: endpoint, chain: chain, ownInterceptor: interceptor != nil, context: context, mode: mode) {
                case .answer(let response, let result, let key):
                    // Answered stale at once: revalidated behind it (RFC 5861 §3), even when the endpoint rejects it.
                    if result == .staleWhileRevalidate { revalidatedBehind = key }
                    // Every cache answer meets the endpoint's statuses as the server's would; a failure is final (no retrier).
                    var unjudged: Response?
                    _ = try validate(response, for: endpoint, context: context, inMemory: false, judged: &unjudged)
                    let report = CallReport(statusCodes: [], duration: started.secondsElapsed, cache: result)
                    return (answered(response, report: report, key: key, request: built, context: context), nil)
                case .send(let conditional, let use):
                    (request, cacheUse) = (conditional, use)
                }
            }
            var (response, delivered): (Response, DeliveredBody?)
            do {
                (response, delivered) = try await run(
                    request, for: endpoint, context: context, chain: chain, deadline: deadline, mode: mode, cacheUse: cacheUse,
                    first: first.take(), sent: &sent, statuses: &statuses, hops: &hops, waited: &waited)
            } catch  where cacheUse?.revalidates == true && statuses.last == .some(304) && !Self.endsTheCall(error) {
                // A 304 about another representation than the stored one: ask again, without conditions
                // (not after a cancellation or the deadline that came after the 304: those end the call).
                if let use = cacheUse { await use.cache.removeResponse(for: use.key) }
                cacheUse?.entry = nil
                cacheUse?.revalidates = false
                (response, delivered) = try await run(
                    built, for: endpoint, context: context, chain: chain, deadline: deadline, mode: mode, cacheUse: cacheUse,
                    sent: &sent, statuses: &statuses, hops: &hops, waited: &waited)
            }
            var cacheResult: CacheResult?
            if let use = cacheUse {
                cacheResult = await updateCache(
                    // A 304 the endpoint accepts as it is (it names another ETag) is no revalidation: the entry goes.
                    with: response, use: use, revalidated: use.revalidates && statuses.last == .some(304) && response.statusCode != 304,
                    redirected: !hops.isEmpty)
                if !events.isEmpty, let cacheResult { events.send { $0.cacheDidAnswer(cacheResult, key: use.key, context: context) } }
            } else if cache != nil {
                await invalidateCache(after: response, built: built, chain: chain, context: context)
            }
            let duration = started.secondsElapsed
            response.storedReport = CallReport(statusCodes: statuses, duration: duration, redirects: hops, cache: cacheResult, connectivityWait: waited)
            response.storedReport?.queueWait = context.queueWait
            if !events.isEmpty {
                let (last, count, finished) = (shown(sent ?? built), statuses.count, response)
                events.send { $0.requestDidFinish(last, result: .success(finished), attempts: count, duration: duration, context: context) }
            }
            if mode.streams, !events.isEmpty { Self.reportStreamEnd(of: delivered, response: response, to: events, context: context) }
            return (response, delivered)
        } catch {
            if let use = cacheUse, let (stale, key) = staleIfErrorResponse(after: Self.servedStaleAfter(error), lastStatus: statuses.last ?? nil, use: use),
                endpoint.acceptableStatusCodes.contains(stale.statusCode)
            {
                var report = CallReport(
                    statusCodes: statuses, duration: started.secondsElapsed, redirects: hops, cache: .staleIfError, connectivityWait: waited)
                report.queueWait = context.queueWait
                return (answered(stale, report: report, key: key, request: sent ?? use.built, context: context), nil)
            }
            if !events.isEmpty, let sent {
                let (last, count, duration) = (shown(sent), statuses.count, started.secondsElapsed)
                events.send { $0.requestDidFinish(last, result: .failure(error), attempts: count, duration: duration, context: context) }
            }
            throw error
        }
    }

    /// The attempt loop: adapt → send → validate → on error ask the retriers → retry or throw. `first`: the
    /// first attempt's slot, or the error its wait for one ended with, when the call waited before its
    /// pipeline (see ``CallStart``); given back unused when the call ends before it sends, or must wait for
    /// the network first (no slot is held meanwhile).
    private func run(
        _ built: URLRequest,
        for endpoint: some Endpoint,
        context: RequestContext,
        chain: (any RequestInterceptor)?,
        deadline: Deadline,
        mode: TransferMode,
        cacheUse: CacheUse?,
        first: FirstSend? = nil,
        sent: inout URLRequest?,
        statuses: inout [Int?],
        hops: inout [RedirectHop],
        waited: inout TimeInterval
    ) async throws -> (response: Response, delivered: DeliveredBody?) {
        // A background revalidation (RFC 5861 §3) never waits offline: nobody waits for it, and it holds its
        // entry's slot; the next stale answer starts another.
        let offlineBehavior = context.isBackgroundRevalidation ? .fail : endpoint.offlineBehavior ?? self.offlineBehavior
        var first = first
        defer { first?.releaseUnused() }
        while true {
            // A first send settled before the pipeline (its wait failed, or its shared exchange answered) is the
            // first attempt's, as a wait here would be.
            switch first {
            case .failed?, .answered?:
                break
            case .slot?, nil:
                if Task.isCancelled { throw NetworkError.cancelled }
                if deadline.hasPassed { throw deadline.exceeded }
                if !connectivity.isOnline {   // offline: a stale answer the cache may give, or a wait, then the attempt
                    first.take()?.releaseUnused()   // none held while offline
                    if answersOfflineFromCache(cacheUse) { throw NetworkError.offline }
                    try await waitForConnectivity(offlineBehavior, deadline: deadline, context: context, waited: &waited)
                }
            }
            statuses.append(nil)   // an attempt not started (the checks above) is none: no attempt is counted but not told
            let attempts = statuses.count
            var request = built
            var response: Response?
            var shownRequest: URLRequest?   // `request` as retriers see it, when the attempt already made it (no redirect)
            var taskStarted = DispatchTime.now()
            do {
                if let chain {
                    request = try await chain.adapt(built, for: context)
                    if !events.isEmpty { events.send { [request = shown(request)] in $0.requestDidAdapt(request, context: context) } }
                }
                sent = request
                if chain != nil {
                    try WireValidation.check(request)   // the endpoint's own parts were checked when built
                    if deadline.hasPassed { throw deadline.exceeded }   // the interceptors may have waited (a refresh)
                }
                var (slot, answered): (CallSlot?, (Data, HTTPURLResponse)?) = (nil, nil)
                switch first.take() {
                case .slot(let taken)?: slot = taken   // taken before the pipeline, for the request as built (no interceptor)
                case .answered(let data, let response)?: answered = (data, response)   // a shared exchange, before the pipeline
                case .failed(let error)?: throw error
                case nil:   // may queue (see Scheduling); a call that may share takes none: its shared exchange does
                    if mode.member == nil {
                        var waitedBefore = context.queueWait
                        slot = try await takeSlot(for: request, context: context, deadline: deadline)
                        // It waited in the queue: sent as its adapters would adapt it now (a token refreshed
                        // meanwhile: no 401 for a token already replaced; see ReadyAdapting). When they would wait
                        // (a refresh runs), the slot goes back first, and the call queues again in its place once
                        // adapted (twice at most). One that fails the wire checks is not sent: the request adapted
                        // before, checked, goes, and the next adapt throws the error.
                        var readapts = 0
                        requeue: while context.queueWait > waitedBefore, let chain, let ready = chain as? any ReadyAdapting {
                            switch ready.adaptation(of: built, for: context) {
                            case .ready(let now):
                                if (try? WireValidation.check(now)) != nil {
                                    (request, sent) = (now, now)
                                    if !events.isEmpty { events.send { [request = shown(now)] in $0.requestDidAdapt(request, context: context) } }
                                }
                            case .waits where readapts < 2:
                                readapts += 1
                                slot.take()?.release()
                                request = try await chain.adapt(built, for: context)   // holding no slot
                                sent = request
                                if !events.isEmpty { events.send { [request = shown(request)] in $0.requestDidAdapt(request, context: context) } }
                                try WireValidation.check(request)
                                if deadline.hasPassed { throw deadline.exceeded }
                                waitedBefore = context.queueWait
                                slot = try await takeSlot(for: request, context: context, deadline: deadline)
                                continue requeue
                            case .waits, .unknown:
                                break
                            }
                            break requeue
                        }
                    }
                }
                // A call that may share is told by the exchange it starts (none for one it shares: see CallGroups).
                if mode.member == nil, !events.isEmpty { events.send { [request = shown(request)] in $0.taskDidStart(request, context: context) } }
                taskStarted = DispatchTime.now()
                let limit = endpoint.maximumResponseSize ?? maximumResponseSize
                let hopsBefore = hops.count
                let (data, httpResponse, delivered, last) = try await send(
                    request, slot: slot, answered: answered, builtAs: chain == nil ? nil : built, for: endpoint, context: context, deadline: deadline,
                    limits: (delivery: mode.sizeLimit ?? limit, gathered: limit), mode: mode, attempt: attempts, hops: &hops)
                sent = last
                let shownLast = shown(last)   // once: hiding the routing header copies the request
                if hops.count == hopsBefore { shownRequest = shownLast }   // no hop followed: `last` is `request`
                var answer = Response(data: data, httpResponse: httpResponse, request: shownLast)
                if let member = mode.member { answer.sharedDecodings = callGroups.decodings(answering: member) }
                let arrived = answer
                let received: Response
                if httpResponse.statusCode == 304, let use = cacheUse, let stored = revalidatedResponse(httpResponse, request: shownLast, use: use) {
                    received = stored   // the stored body, its headers updated: validated and handed on as the answer
                } else {
                    received = arrived
                }
                response = received
                statuses[statuses.count - 1] = httpResponse.statusCode
                if !events.isEmpty {
                    let duration = taskStarted.secondsElapsed
                    events.send { $0.responseDidArrive(arrived, duration: duration, context: context) }
                }
                let validated = try validate(received, for: endpoint, context: context, inMemory: delivered == nil, judged: &response)
                RefreshRun.current?.record(status: nil, of: context)
                return (validated, delivered)
            } catch {
                RefreshRun.current?.record(
                    status: response.map { $0.envelopeStatusCode ?? (endpoint.acceptableStatusCodes.contains($0.statusCode) ? nil : $0.statusCode) } ?? nil,
                    of: context)
                let error = Self.normalize(error)
                if !events.isEmpty {
                    events.send { [failed = response?.request ?? shown(request), response, attempts, duration = taskStarted.secondsElapsed] in
                        $0.attemptDidFail(failed, response: response, error: error, attempt: attempts, duration: duration, context: context)
                    }
                }
                if let refused = ServerTrustRefusal.endingTheCall(error) { throw refused }   // the server's chain: no retrier asked
                if failedOffline(error, request: request) {   // no attempt spent, no retrier asked: the cache answers, or the call waits (or fails)
                    statuses.removeLast()
                    if answersOfflineFromCache(cacheUse) { throw error }
                    try await waitForConnectivity(offlineBehavior, deadline: deadline, context: context, waited: &waited)
                    continue
                }
                if mode.resumption?.restartsAfterRefusal() == true, attempts < maximumAttempts {
                    context.recordRetry()   // a refused range: the download starts again from its first byte, unasked
                    continue
                }
                switch error {
                case NetworkError.cancelled, NetworkError.invalidRequest, NetworkError.deadlineExceeded, NetworkError.responseTooLarge,
                    NetworkError.fileWriteFailed, NetworkError.encodingFailed, NetworkError.pinMismatch, NetworkError.unenforceablePins,
                    NetworkError.refreshFailed(NetworkError.pinMismatch), NetworkError.refreshFailed(NetworkError.unenforceablePins):
                    throw error   // never worth another attempt (a refresh that met a refused chain included)
                default: break
                }
                guard let chain else { throw error }
                // The cap allows no other attempt: the retriers are not asked, so none starts work
                // (such as a token refresh) whose result would be thrown away.
                guard attempts < maximumAttempts else {
                    throw attempts > 1 ? NetworkError.tooManyAttempts(attempts, lastError: error) : error
                }
                let decision = await chain.retry(shownRequest ?? shown(request), dueTo: error, response: response, context: context)
                events.send { [attempts] in $0.retryDidDecide(decision, attempt: attempts, error: error, context: context) }
                if Task.isCancelled { throw NetworkError.cancelled }
                switch decision {
                case .doNotRetry:
                    throw error
                case .doNotRetryWithError(let replacement):
                    throw Self.normalize(replacement)
                case .retry:
                    break
                case .retryWithDelay(let seconds):
                    guard deadline.allows(delay: seconds) else { throw deadline.exceeded }
                    if seconds > 0 {
                        do { try await sleep(seconds) } catch { throw NetworkError.cancelled }
                    }
                }
                context.recordRetry()
            }
        }
    }

    /// The provider's interceptor followed by the call's, or whichever exists.
    func chain(with callInterceptor: (any RequestInterceptor)?) -> (any RequestInterceptor)? {
        switch (interceptor, callInterceptor) {
        case let (provider?, call?): return Interceptor(interceptors: [provider, call])
        case let (provider?, nil): return provider
        case let (nil, call?): return call
        case (nil, nil): return nil
        }
    }

    /// Throws the attempt's error: its status is unacceptable, or its envelope reports a failure (which
    /// `judged` then carries as ``Response/envelopeStatusCode``, for the retriers), or is not an envelope.
    private func validate(
        _ response: Response, for endpoint: some Endpoint, context: RequestContext, inMemory: Bool, judged: inout Response?
    ) throws -> Response {
        guard let (error, failed) = try validationFailure(of: response, for: endpoint, inMemory: inMemory) else { return response }
        judged = failed
        events.send { [failed] in $0.validationDidFail(failed, error: error, context: context) }
        throw error
    }

    /// The error `response` fails `endpoint`'s validation with — its status is unacceptable, or its envelope
    /// (read when `inMemory`, or for an unacceptable status) reports a failure — and the response as judged
    /// (``Response/envelopeStatusCode`` set); `nil` when it passes. Throws when an acceptable answer is no
    /// envelope. Tells the monitors nothing.
    func validationFailure(of response: Response, for endpoint: some Endpoint, inMemory: Bool) throws -> (error: any Error, judged: Response)? {
        let acceptable = endpoint.acceptableStatusCodes.contains(response.statusCode)
        let failure = acceptable && !inMemory ? nil : try envelopeFailure(of: response, for: endpoint, acceptable: acceptable)
        guard acceptable, failure == nil else {
            var failed = response
            failed.envelopeStatusCode = failure?.standsForStatus
            return (failure?.error ?? errorMapper?(response) ?? NetworkError.invalidStatusCode(response.statusCode), failed)
        }
        return nil
    }

    /// Whether `error` is the caller's cancellation or the call's deadline: the call ends, whatever its last
    /// attempt got.
    private static func endsTheCall(_ error: any Error) -> Bool {
        switch error as? NetworkError {
        case .cancelled?, .deadlineExceeded?, .offline?: return true
        default: return false
        }
    }

    /// Maps what URLSession and Swift concurrency throw to ``NetworkError`` where one fits.
    static func normalize(_ error: any Error) -> any Error {
        if error is CancellationError || Task.isCancelled { return NetworkError.cancelled }
        if let urlError = error as? URLError {
            return urlError.code == .cancelled ? NetworkError.cancelled : NetworkError.transportFailed(urlError)
        }
        return error
    }
}

extension DispatchTime {
    /// Seconds from this time until now.
    var secondsElapsed: TimeInterval {
        Double(DispatchTime.now().uptimeNanoseconds - uptimeNanoseconds) / 1_000_000_000
    }
}
