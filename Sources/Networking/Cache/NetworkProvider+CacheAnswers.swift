import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// ``consultCache(_:preconditions:for:chain:ownInterceptor:context:mode:)`` for a request that may carry
    /// its own preconditions or `Range`: those the cache evaluates (`If-None-Match`, `If-Modified-Since`,
    /// one byte range with or without `If-Range`; RFC 9111 §4.3.2, RFC 9110 §13.2.2, §14.2) are answered
    /// from the stored response the request without them would get (`304`, `206`, or the whole response).
    /// When no stored response may answer, or the cache cannot compute the answer, the request goes to the
    /// server as the app built it and the cache takes no part in its answer (an entry the consultation found
    /// unfit for the endpoint's envelope is removed all the same); a call that may send nothing fails with
    /// ``NetworkError/notCached``. The request's header fields are read once here.
    ///
    /// A background revalidation (RFC 5861 §3) is about the entry itself: it revalidates it with the request
    /// without the app's preconditions and `Range`, as the consultation of that request decides.
    func consultCacheAnswering(
        _ built: URLRequest, for endpoint: some Endpoint, chain: (any RequestInterceptor)?, ownInterceptor: Bool,
        context: RequestContext, mode: TransferMode
    ) async throws -> CacheConsultation {
        let preconditions = HTTPCaching.preconditions(of: built)
        guard preconditions == .evaluated else {
            return try await consultCache(
                built, preconditions: preconditions, for: endpoint, chain: chain, ownInterceptor: ownInterceptor, context: context, mode: mode)
        }
        let consultation = try await consultCache(
            HTTPCaching.withoutPreconditions(built), preconditions: .none, for: endpoint, chain: chain, ownInterceptor: ownInterceptor,
            context: context, mode: mode)
        if context.isBackgroundRevalidation { return consultation }   // the entry's own revalidation (or a fresh hit)
        if case .answer(let stored, let result, let key) = consultation {
            let now = now()
            // RFC 9111 §4.3.2: a stored response without Last-Modified or Date was last modified when it was received.
            var received: Date?
            if built.value(forHTTPHeaderField: "If-Modified-Since") != nil, HTTPCaching.lastModified(of: stored.httpResponse, now: now) == nil {
                received = await cache?.cachedResponse(for: key)?.responseDate
            }
            if let (response, data) = HTTPCaching.answer(to: built, from: stored, received: received, now: now) {
                return .answer(Response(data: data, httpResponse: response, request: shown(built)), result, key)
            }
        }
        let policy = mode.cachePolicy ?? endpoint.cachePolicy ?? cachePolicy
        if policy.kind == .cacheOnly || policy.kind == .preview || HTTPCaching.onlyIfCached(built) { throw NetworkError.notCached }
        return .send(built, nil)
    }

    /// The stored `GET` response of the variant (`Vary`) `use.built`, a `HEAD`, selects in its partition.
    func storedGET(for use: CacheUse) async -> CachedResponse? {
        guard let entry = await use.cache.cachedResponse(for: use.storedGETKey),
            HTTPCaching.variantMatches(entry, use.built, sessionAddsCookies: sessionAddsCookies),
            HTTPCaching.answersOnline(entry), !HTTPCaching.keepHasExpired(entry, now: use.requestDate)   // not a copy only keepForOffline may use
        else { return nil }
        return entry
    }

    /// The stored `GET` response (``CacheUse/storedGET``) as the answer to `head`, a `HEAD` call without
    /// an entry of its own: its status and header fields, no content (RFC 9110 §9.3.2; RFC 9111 §4 lets a
    /// cache use it). Only when the call's policy would answer the `GET` with it, as a `GET` is answered:
    /// fresh; stale under ``CachePolicy/cacheElseLoad`` and ``CachePolicy/cacheOnly`` unless it says
    /// `must-revalidate` or `no-cache`; under ``CachePolicy/staleIfError(upTo:)`` with `only-if-cached`
    /// (`sendsNothing`), stale within the allowance (RFC 5861 §4). Otherwise `nil` and the `HEAD` is sent.
    func storedGETAnswer(to head: URLRequest, use: CacheUse, sendsNothing: Bool) -> CacheConsultation? {
        guard let entry = use.storedGETWithoutBody else { return nil }
        let key = use.storedGETKey
        let (fresh, age) = HTTPCaching.freshness(of: entry, for: head, now: use.requestDate)
        let answers: Bool
        switch use.policy.kind {
        case .http, .staleIfError, .keepForOffline:
            answers = fresh
            if !fresh, sendsNothing, let response = staleIfErrorResponse(use: use, entry: entry, now: use.requestDate, serverError: true) {
                return .answer(response, .staleIfError, key)
            }
        case .cacheElseLoad, .cacheOnly: answers = fresh || HTTPCaching.mayServeStale(entry)
        case .preview: answers = true
        case .revalidate, .reload, .disabled: answers = false
        }
        guard answers, let stored = cachedResponse(entry, for: head, age: age) else { return nil }
        return .answer(stored, fresh ? .hit : .staleHit, key)
    }

    /// After a `200` to `HEAD` (not reached through a redirect): updates the stored `GET` response of the
    /// variant the request selects with its header fields, as a `304` does (RFC 9111 §4.3.5, §3.2), when it
    /// describes the same representation (``HTTPCaching/headDescribes(_:stored:)``); removes it when it
    /// describes another (§4.3.5 "consider the stored response to be stale": one no validator could
    /// revalidate), says `no-store`, or says `Vary: *` (RFC 9111 §4.1: never selected again).
    ///
    /// Leaves it as it is when the `HEAD` tells nothing about it (no `ETag`, `Last-Modified` or
    /// `Content-Length`), when the `HEAD` request said `no-store` (RFC 9111 §5.2.1.5 keeps only this
    /// exchange out of the cache), when it carried credentials no interceptor tied to an account (the
    /// shared entry is not its to change, as such a response is never stored), and when the stored `GET`
    /// is not the one there when the `HEAD` was sent (a `GET` stored meanwhile wins, as after a `304`).
    func freshenStoredGET(after head: Response, use: CacheUse, redirected: Bool) async {
        guard !redirected, use.key.method == "HEAD", head.statusCode == 200, let seen = use.storedGET,
            use.key.partition != nil || !Self.carriesCredentials(head.request),   // not its to change, as updateCache stores none
            !CacheControl(header: use.built.value(forHTTPHeaderField: "Cache-Control")).noStore   // RFC 9111 §5.2.1.5: this exchange only
        else { return }
        let key = use.storedGETKey
        guard let stored = await use.cache.cachedResponse(for: key), stored.responseDate == seen.responseDate,
            HeaderFields.value(of: "ETag", in: stored.headers) == HeaderFields.value(of: "ETag", in: seen.headers),
            let describes = HTTPCaching.headDescribes(head.httpResponse, stored: stored)   // nil: the HEAD tells nothing about it
        else { return }   // a GET stored (or removed) while the HEAD was out wins
        if describes, !HTTPCaching.variesOnEverything(head.httpResponse) {
            let updated = HTTPCaching.updated(stored, with: head.httpResponse, requestDate: use.requestDate, responseDate: now())
            if HTTPCaching.mayStore(updated, replacing: stored, for: use.built) {
                await use.cache.store(updated, for: key)
                if let stamp = use.stamp, !stamp.isCurrent { await use.cache.removeResponse(for: key) }   // the account changed meanwhile
                return
            }
        }
        await use.cache.removeResponse(for: key)
    }
}

extension CacheUse {
    /// The key of the stored `GET` response a `HEAD` call may be answered by (RFC 9110 §9.3.2).
    var storedGETKey: CacheKey { CacheKey(partition: key.partition, method: "GET", url: key.url) }

    /// ``storedGET`` without its content: what answers a `HEAD` (RFC 9110 §9.3.2).
    var storedGETWithoutBody: CachedResponse? {
        guard var entry = storedGET else { return nil }
        entry.body = Data()
        return entry
    }
}
