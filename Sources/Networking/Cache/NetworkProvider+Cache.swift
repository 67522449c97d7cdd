import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call's use of the response cache, decided before anything is sent.
struct CacheUse: @unchecked Sendable {
    // @unchecked: URLRequest is an immutable value here.
    let cache: any ResponseCache
    let key: CacheKey
    let policy: CachePolicy
    /// The request as the endpoint built it: `Vary` is matched against its headers.
    let built: URLRequest
    /// The stored entry that matched the request, if any.
    var entry: CachedResponse?
    /// The account the call was sent for, while it is still the signed-in one.
    let stamp: AccountStamp?
    /// Whether the request carries the conditional headers that revalidate ``entry``.
    var revalidates = false
    /// When the call began: the entry's `request_time` (conservative: retries count as transit).
    let requestDate: Date
    /// For a `HEAD`: the stored `GET` response of its variant when the call began (RFC 9111 §4.3.5).
    var storedGET: CachedResponse?
    /// The seconds of the endpoint's ``CachePolicy/keepForOffline(upTo:)``: every successful answer is
    /// stored, kept that long. Also when the call's policy is an internal one (cached-then-fresh's network
    /// part, a background revalidation): their answers refresh the kept copy too.
    var keep: TimeInterval?
    /// Under ``CachePolicy/keepForOffline(upTo:)``: the stored entry of the request's variant, which answers
    /// when the server cannot (``NetworkProvider/keptCopyResponse(use:now:)``), even one the HTTP rules may
    /// not use (then ``entry`` is `nil`).
    var keptCopy: CachedResponse?
}

/// The answer of the cache before sending: a response, or the request to send and how the cache
/// takes part in it.
enum CacheConsultation {
    case answer(Response, CacheResult, CacheKey)
    case send(URLRequest, CacheUse?)
}

extension NetworkProvider {
    /// Decides how the cache takes part in a call: answers it from a stored entry (no interceptor runs),
    /// adds the conditional headers that revalidate one, or lets it load. Throws
    /// ``NetworkError/notCached`` when the call may send nothing — a ``CachePolicy/cacheOnly`` call, or a
    /// request that says `Cache-Control: only-if-cached` (RFC 9111 §5.2.1.7) — and no stored entry may
    /// answer it. `preconditions`: those of `built`, read once by ``consultCacheAnswering``.
    func consultCache(
        _ built: URLRequest, preconditions: HTTPCaching.Preconditions, for endpoint: some Endpoint, chain: (any RequestInterceptor)?,
        ownInterceptor: Bool, context: RequestContext, mode: TransferMode
    ) async throws -> CacheConsultation {
        let policy = mode.cachePolicy ?? endpoint.cachePolicy ?? cachePolicy
        let sendsNothing = policy.kind == .cacheOnly || policy.kind == .preview || HTTPCaching.onlyIfCached(built)
        guard let cache, policy.kind != .disabled, mode.bodyFile == nil, mode.downloadDirectory == nil, !mode.streams,
            let method = built.httpMethod, method == "GET" || method == "HEAD", let url = built.url,
            preconditions == .none,   // the app's own preconditions and ranges: consultCacheAnswering
            context.refreshing == nil, RefreshRun.current?.isRunning != true   // a token refresh's answer holds tokens
        else {
            if sendsNothing { throw NetworkError.notCached }
            return .send(built, nil)
        }
        guard let (partition, stamp) = await partition(of: built, chain: chain, ownInterceptor: ownInterceptor, cache: cache, context: context)
        else {
            try context.checkRevalidatedKey(nil)
            if sendsNothing { throw NetworkError.notCached }
            return .send(built, nil)   // authenticated for no known account: never shared, never stored
        }
        let requestDate = now()
        var use = CacheUse(
            cache: cache, key: CacheKey(partition: partition, method: method, url: HTTPCaching.keyURL(url)), policy: policy, built: built,
            stamp: stamp, requestDate: requestDate, keep: (endpoint.cachePolicy ?? cachePolicy).keepSeconds)
        try context.checkRevalidatedKey(use.key)   // a background revalidation: still the account whose entry answered
        if policy.kind != .reload, let entry = await cache.cachedResponse(for: use.key),
            HTTPCaching.variantMatches(entry, built, sessionAddsCookies: sessionAddsCookies),
            await storedEntryFitsEnvelope(entry, method: method, for: endpoint, key: use.key, cache: cache)
        {
            if HTTPCaching.keepHasExpired(entry, now: requestDate) {
                await cache.removeResponse(for: use.key)   // kept for offline, and past its keep time: never answers
            } else {
                if HTTPCaching.answersOnline(entry) { use.entry = entry }   // not a copy only keepForOffline may use
                // keepForOffline's, and cached-then-fresh's network part for a keepForOffline endpoint (not a background revalidation)
                if policy.keepSeconds != nil || (policy.kind == .revalidate && use.keep != nil && !context.isBackgroundRevalidation) {
                    use.keptCopy = entry
                }
            }
        }
        if method == "HEAD" { use.storedGET = await storedGET(for: use) }
        if use.entry == nil, let answer = storedGETAnswer(to: built, use: use, sendsNothing: sendsNothing) { return answer }
        guard let entry = use.entry else {
            try context.checkRevalidatedKey(nil)   // a background revalidation's entry is gone: nothing to revalidate
            // only-if-cached: the server is out of reach by the request's own choice (as below).
            if sendsNothing, let response = keptCopyResponse(use: use, now: requestDate) { return .answer(response, .staleIfError, use.key) }
            if sendsNothing { throw NetworkError.notCached }
            return .send(built, use)
        }
        let (fresh, age) = HTTPCaching.freshness(of: entry, for: built, now: requestDate)
        // A background revalidation whose entry was made fresh meanwhile (a foreground load stored it): nothing to send.
        if fresh, context.isBackgroundRevalidation, let response = cachedResponse(entry, for: built, age: age) { return .answer(response, .hit, use.key) }
        switch policy.kind {
        case .cacheOnly, .cacheElseLoad:
            // Stale, unless its response forbids that (must-revalidate, no-cache: RFC 9111 §4.2.4): then revalidated.
            if fresh || HTTPCaching.mayServeStale(entry), let response = cachedResponse(entry, for: built, age: age) {
                return .answer(response, fresh ? .hit : .staleHit, use.key)
            }
        case .preview:
            if let response = cachedResponse(entry, for: built, age: age) { return .answer(response, fresh ? .hit : .staleHit, use.key) }
        case .http, .staleIfError, .keepForOffline:
            if fresh, let response = cachedResponse(entry, for: built, age: age) { return .answer(response, .hit, use.key) }
            // stale-while-revalidate: answered at once; the caller starts the background revalidation (RFC 5861 §3).
            if !sendsNothing, HTTPCaching.mayServeWhileRevalidating(entry, for: built, now: requestDate),
                let response = cachedResponse(entry, for: built, age: age)
            {
                return .answer(response, .staleWhileRevalidate, use.key)
            }
            // only-if-cached: the server is out of reach by the request's own choice, as when it cannot answer
            // (RFC 9111 §5.2.1.7's 504: an error in RFC 5861 §4's sense).
            if sendsNothing,
                let response = keptCopyResponse(use: use, now: requestDate)
                    ?? staleIfErrorResponse(use: use, entry: entry, now: requestDate, serverError: true)
            {
                return .answer(response, .staleIfError, use.key)
            }
        case .revalidate, .reload, .disabled:
            break
        }
        if sendsNothing { throw NetworkError.notCached }   // the answer would have been the server's: a 504 of the RFC's
        let conditions = HTTPCaching.conditionalHeaders(for: entry)
        guard !conditions.isEmpty else { return .send(built, use) }
        var request = built
        for (name, value) in conditions { request.setValue(value, forHTTPHeaderField: name) }
        use.revalidates = true
        return .send(request, use)
    }

    /// A `304` that answers `use`'s revalidation as the stored response, its headers updated; `nil` when
    /// the 304 is about another representation (its `ETag` differs).
    func revalidatedResponse(_ notModified: HTTPURLResponse, request: URLRequest, use: CacheUse) -> Response? {
        guard use.revalidates, let entry = use.entry, HTTPCaching.notModified(notModified, matches: entry) else { return nil }
        let updated = HTTPCaching.updated(entry, with: notModified, requestDate: use.requestDate, responseDate: now())
        return cachedResponse(updated, for: request, age: HTTPCaching.currentAge(of: updated, now: updated.responseDate))
    }

    /// After an accepted response: stores it (or the entry a 304 updated), or removes an entry it
    /// replaces with something that may not be stored. Returns how the cache took part. `revalidated`: the
    /// answer is the stored entry a 304 confirmed.
    func updateCache(with response: Response, use: CacheUse, revalidated: Bool, redirected: Bool) async -> CacheResult {
        let result: CacheResult = revalidated ? .revalidated : .miss
        // The account signed out (or another signed in) while the call was out: its entries were cleared,
        // and this answer must not bring one back.
        if let stamp = use.stamp, !stamp.isCurrent { return result }
        // A copy kept for offline outside an account's partition while the session sends its own cookies could
        // be about whoever they sign in (a cookie session): only what the HTTP rules store (Caching.md).
        var use = use
        if use.keep != nil, use.key.partition == nil, sessionSendsCookies(to: use.built.url) { use.keep = nil }
        if revalidated, let entry = use.entry {
            let updated = HTTPCaching.updated(entry, with: response.httpResponse, requestDate: use.requestDate, responseDate: now())
            // Only the entry the 304 is about, still there: a newer answer stored meanwhile (or a removal) wins.
            guard let current = await use.cache.cachedResponse(for: use.key), current.responseDate == entry.responseDate,
                HeaderFields.value(of: "ETag", in: current.headers) == HeaderFields.value(of: "ETag", in: entry.headers)
            else { return result }
            if HTTPCaching.mayStore(updated, replacing: entry, for: use.built, keeps: use.keep != nil) {
                await store(use.keep.map { HTTPCaching.kept(updated, for: $0) } ?? updated, use: use)
            } else {
                await use.cache.removeResponse(for: use.key)   // the 304 said no-store, or named another Vary
            }
            return result
        }
        // A response reached through a redirect answers another URL: it is not filed under this one. One
        // to a request with credentials that no interceptor tied to an account (an adapter of the app's
        // own, or an AuthInterceptor inside another interceptor) could be anyone's: not stored.
        if !redirected, use.key.partition != nil || !Self.carriesCredentials(response.request),
            let entry = HTTPCaching.entry(
                for: response.httpResponse, body: response.data, request: use.built, requestDate: use.requestDate, responseDate: now(),
                sessionAddsCookies: sessionAddsCookies, keep: use.keep)
        {
            await store(entry, use: use)
        } else if use.entry != nil || use.keptCopy != nil {
            await use.cache.removeResponse(for: use.key)
        }
        await freshenStoredGET(after: response, use: use, redirected: redirected)   // RFC 9111 §4.3.5
        return result
    }

    /// Stores `entry` for `use`, and takes it out again if the account changed while it was written (the
    /// clearing that change scheduled may have run before the write).
    private func store(_ entry: CachedResponse, use: CacheUse) async {
        await use.cache.store(entry, for: use.key)
        if let stamp = use.stamp, !stamp.isCurrent { await use.cache.removeResponse(for: use.key) }
    }

    /// `response`, answered from the cache, with its `report`; the monitors are told (the cache's answer,
    /// then the call's end with `request`, the last one sent or the one built).
    func answered(_ response: Response, report: CallReport, key: CacheKey, request: URLRequest, context: RequestContext) -> Response {
        var response = response
        response.storedReport = report
        if !events.isEmpty, let result = report.cache {
            let (finished, shownRequest) = (response, shown(request))
            events.send { $0.cacheDidAnswer(result, key: key, context: context) }
            events.send {
                $0.requestDidFinish(shownRequest, result: .success(finished), attempts: report.attempts, duration: report.duration, context: context)
            }
        }
        return response
    }

    /// The stored entry that answers a call that failed with `error`: when the server could not answer (a
    /// transport failure, the deadline, a 5xx) and the entry is stale by no more than the call may use — a
    /// ``CachePolicy/staleIfError(upTo:)`` policy's seconds, or for a 500, 502, 503, 504 or no answer, a
    /// `stale-if-error` of the response or the request (RFC 5861 §4), whichever is larger. Under
    /// ``CachePolicy/keepForOffline(upTo:)``, its kept copy first (``keptCopyResponse(use:now:)``). With the key
    /// of the entry that answers: the call's own, or for a `HEAD` without one, the stored `GET`'s (RFC 9110 §9.3.2).
    func staleIfErrorResponse(after error: any Error, lastStatus: Int?, use: CacheUse?) -> (response: Response, key: CacheKey)? {
        guard let use, Self.serverCouldNotAnswer(error, lastStatus: lastStatus) else { return nil }
        if let kept = keptCopyResponse(use: use, now: now()) { return (kept, use.key) }
        let (entry, key) = use.entry.map { ($0, use.key) } ?? (use.storedGETWithoutBody, use.storedGETKey)
        guard let entry,
            let response = staleIfErrorResponse(use: use, entry: entry, now: now(), serverError: HTTPCaching.isStaleIfErrorFailure(status: lastStatus))
        else { return nil }
        return (response, key)
    }

    /// `entry` as the answer of a call (under ``CachePolicy/http`` or ``CachePolicy/staleIfError(upTo:)``)
    /// whose server cannot answer: when its response allows serving it stale (not `must-revalidate` or
    /// `no-cache`, RFC 9111 §4.2.4) and it is no more than the allowed seconds stale. `serverError`: the
    /// failure is an error in RFC 5861 §4's sense, which the `stale-if-error` directives cover.
    func staleIfErrorResponse(use: CacheUse, entry: CachedResponse, now: Date, serverError: Bool) -> Response? {
        let policyAllowance: TimeInterval?
        switch use.policy.kind {
        case .staleIfError(let seconds): policyAllowance = seconds
        case .http, .keepForOffline: policyAllowance = nil   // keepForOffline's own copy: keptCopyResponse
        case .reload, .cacheElseLoad, .cacheOnly, .disabled, .revalidate, .preview: return nil
        }
        guard
            let allowed = HTTPCaching.staleIfErrorAllowance(of: entry, for: use.built, policyAllowance: policyAllowance, serverError: serverError),
            HTTPCaching.staleness(of: entry, now: now) <= allowed
        else { return nil }
        return cachedResponse(entry, for: use.built, age: HTTPCaching.currentAge(of: entry, now: now))
    }

    /// After a successful unsafe call (`POST`, `PUT`, `PATCH`, `DELETE`, …): removes the entries of its
    /// URL and of a same-origin `Location` or `Content-Location` (RFC 9111 §4.4), for the call's account
    /// and for calls without one.
    func invalidateCache(after response: Response, built: URLRequest, chain: (any RequestInterceptor)?, context: RequestContext) async {
        guard let cache, let method = built.httpMethod, !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method),
            (200..<400).contains(response.statusCode), let url = built.url
        else { return }
        var partitions: [String?] = [nil]
        if let account = await partition(of: built, chain: chain, ownInterceptor: false, cache: cache, context: context)?.partition {
            partitions.append(account)
        }
        var urls = [url]
        for name in ["Location", "Content-Location"] {
            if let value = response.value(forHTTPHeaderField: name), let target = URL(string: value, relativeTo: response.httpResponse.url ?? url),
                Origin(target.absoluteURL) == Origin(url)
            {
                urls.append(target.absoluteURL)
            }
        }
        for partition in partitions {
            for url in urls {
                for method in ["GET", "HEAD"] {
                    await cache.removeResponse(for: CacheKey(partition: partition, method: method, url: HTTPCaching.keyURL(url)))
                }
            }
        }
    }

    /// The partition of a call: `(nil, nil)` when no interceptor authenticates it, an account's partition
    /// and stamp, or `nil` when it is authenticated for no known account.
    private func partition(
        of request: URLRequest, chain: (any RequestInterceptor)?, ownInterceptor: Bool, cache: any ResponseCache, context: RequestContext
    ) async -> (partition: String?, stamp: AccountStamp?)? {
        guard let partitioning = chain as? any CachePartitioning else { return (nil, nil) }
        if ownInterceptor { partitioning.attach(cache) }   // a call's own AuthInterceptor clears this cache too
        switch await partitioning.cachePartition(for: request, context: context) {
        case .notAuthenticated: return (nil, nil)
        case .account(let stamp): return (stamp.partition, stamp)
        case .unknownAccount: return nil
        }
    }

    /// `entry` as the response to `request`, with an `Age` header saying how old it is (`age` seconds).
    func cachedResponse(_ entry: CachedResponse, for request: URLRequest, age: TimeInterval) -> Response? {
        var headers = entry.headers
        if let name = headers.keys.first(where: { HeaderFields.sameName($0, "Age") }) { headers.removeValue(forKey: name) }
        headers["Age"] = String(Int64(age.isNaN ? 0 : min(max(age, 0), 2_147_483_648)))   // Int64: Int may have 32 bits
        // The request's URL: the entry's has secret query values replaced (a redirected answer is never stored).
        guard let http = HTTPURLResponse(url: request.url ?? entry.url, statusCode: entry.statusCode, httpVersion: "HTTP/1.1", headerFields: headers) else {
            return nil
        }
        return Response(data: entry.body, httpResponse: http, request: shown(request))   // never the test kit's routing header
    }

    /// Whether `error` means the server could not give an answer (not that it gave an unwelcome one). The
    /// error decides first: a cancelled call never could (the caller stopped it, whatever the last attempt
    /// got); the deadline and a transport failure always do. Else the last attempt's status: a 5xx, however
    /// the error mapper named it.
    private static func serverCouldNotAnswer(_ error: any Error, lastStatus: Int?) -> Bool {
        switch error as? NetworkError {
        case .cancelled?: return false
        case .transportFailed?, .deadlineExceeded?: return true
        case .tooManyAttempts(_, let last)?: return serverCouldNotAnswer(last, lastStatus: lastStatus)
        default: return (lastStatus ?? 0) >= 500
        }
    }

    /// Whether `request` carries credentials: `Authorization`, `Proxy-Authorization`, or the header an
    /// ``AuthInterceptor`` writes.
    static func carriesCredentials(_ request: URLRequest) -> Bool {
        guard let fields = request.allHTTPHeaderFields, !fields.isEmpty else { return false }
        return fields.keys.contains { name in
            HeaderFields.sameName(name, "Authorization") || HeaderFields.sameName(name, "Proxy-Authorization") || SecretHeaderNames.contains(name)
        }
    }
}
