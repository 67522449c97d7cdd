import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One value of a ``NetworkProviding/cachedThenFresh(_:as:interceptor:)`` sequence: the stored value
/// first, then the network's.
public struct CachedOrFresh<Value: Sendable>: Sendable {
    /// The decoded body (the envelope's payload, when the endpoint has an envelope: see ``EnvelopeFormat``).
    public let value: Value
    /// Whether the value came from the cache without asking the server (the first value, when an entry
    /// was stored); `false` for the network's answer.
    public let isFromCache: Bool
    /// Whether a value from the cache was past its freshness (show it, and perhaps a hint that it may
    /// be out of date).
    public let isStale: Bool

    /// Creates a value (fakes of ``NetworkProviding`` make these).
    public init(value: Value, isFromCache: Bool, isStale: Bool) {
        self.value = value
        self.isFromCache = isFromCache
        self.isStale = isStale
    }
}

extension NetworkProviding {
    /// The network's value only: a fake of ``NetworkProviding`` that does not implement the requirement
    /// yields what ``request(_:as:interceptor:)`` returns, once.
    public func cachedThenFresh<T: Decodable & Sendable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?
    ) -> AsyncThrowingStream<CachedOrFresh<T>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let value = try await request(endpoint, as: type, interceptor: interceptor)
                    continuation.yield(CachedOrFresh(value: value, isFromCache: false, isStale: false))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// ``cachedThenFresh(_:as:interceptor:)`` without a per-call interceptor.
    public func cachedThenFresh<T: Decodable & Sendable>(_ endpoint: some Endpoint, as type: T.Type) -> AsyncThrowingStream<CachedOrFresh<T>, any Error> {
        cachedThenFresh(endpoint, as: type, interceptor: nil)
    }
}

extension NetworkProvider {
    /// Yields the stored value at once, when the cache holds one for `endpoint` (fresh or stale, marked
    /// so), then asks the server — conditionally when the entry has a validator — and yields its value,
    /// unless the server answered `304 Not Modified` to a value already yielded. Then it finishes.
    ///
    /// The pattern of a list that shows what it had and then updates. An error of the network part
    /// ends the sequence after the stored value (show the value and the error, e.g. as a banner); under
    /// ``CachePolicy/keepForOffline(upTo:)``, when the server cannot answer, the kept copy is yielded
    /// instead (marked stale) if nothing was yielded yet, and the sequence ends without an error.
    /// Stopping the loop, or cancelling its task, cancels the request. Without a cache, or with nothing
    /// stored, it yields the network's value only. The stored value is read without interceptors and
    /// without monitor events; the network part is a call like any other (adapt, auth, retries, deadline).
    /// The endpoint's policy holds: ``CachePolicy/disabled`` reads and stores nothing, ``CachePolicy/reload``
    /// skips the stored value, ``CachePolicy/cacheOnly`` yields the stored value (or throws
    /// ``NetworkError/notCached``) and sends nothing. A request that says `Cache-Control: only-if-cached`
    /// (RFC 9111 §5.2.1.7) sends nothing either: it yields the stored value that
    /// ``response(_:interceptor:)`` would answer with under the endpoint's policy, or throws
    /// ``NetworkError/notCached``. Only when nothing is sent is a stored value subject to its freshness,
    /// `must-revalidate` or `no-cache`: otherwise it is shown, marked stale, until the server's answer
    /// (which always follows) replaces or confirms it — a deliberate deviation from RFC 9111 §5.2.2.2 and
    /// §5.2.2.4 (see Caching.md).
    ///
    /// ```swift
    /// for try await update in provider.cachedThenFresh(UserAPI.user(id: 1), as: User.self) {
    ///     user = update.value   // first the stored user, then the server's, if it changed
    /// }
    /// ```
    public func cachedThenFresh<T: Decodable & Sendable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?
    ) -> AsyncThrowingStream<CachedOrFresh<T>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var yielded = false
                    let built = try builtRequestAndBody(for: endpoint).request
                    let kind = (endpoint.cachePolicy ?? cachePolicy).kind
                    // only-if-cached stops the network only: the endpoint's policy decides which entry answers,
                    // as in response(_:) (RFC 9111 §5.2.1.7).
                    let sendsNothing = kind == .cacheOnly || (HTTPCaching.onlyIfCached(built) && kind != .reload && kind != .disabled)
                    if let stored = try await storedResponse(endpoint, built: built, kind: kind, sendsNothing: sendsNothing, interceptor: interceptor),
                        let value = try? decodePayload(stored, as: type, for: endpoint)   // undecodable: the network's value replaces it
                    {
                        continuation.yield(CachedOrFresh(value: value, isFromCache: true, isStale: stored.report.cache?.isStale ?? false))
                        yielded = true
                    }
                    if sendsNothing {
                        guard yielded else { throw NetworkError.notCached }
                        continuation.finish()   // no request: the stored value was all there is
                        return
                    }
                    var mode = TransferMode()
                    switch kind {
                    case .http, .staleIfError, .keepForOffline, .cacheElseLoad, .revalidate, .preview, .cacheOnly:
                        mode.cachePolicy = .revalidate   // ask the server, conditionally when the entry has a validator
                    case .reload, .disabled:
                        break   // the endpoint's own policy: a full load (stored as usual), or no cache at all
                    }
                    let response = try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode).response
                    if response.report.cache == .staleIfError {   // the server could not answer: the copy keepForOffline kept
                        if !yielded {
                            let value = try decodePayload(response, as: type, for: endpoint)
                            continuation.yield(CachedOrFresh(value: value, isFromCache: true, isStale: true))
                        }
                    } else if !(yielded && response.report.cache == .revalidated) {
                        let value = try decodePayload(response, as: type, for: endpoint)
                        continuation.yield(CachedOrFresh(value: value, isFromCache: false, isStale: false))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: Self.normalize(error))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The stored response for `endpoint` (`built`, under a policy of `kind`), or `nil`: nothing is sent.
    /// However stale, unless the call sends nothing after it (`sendsNothing`: ``CachePolicy/cacheOnly``, or
    /// `only-if-cached`): then as the endpoint's policy allows, as `response(_:interceptor:)` would answer.
    private func storedResponse(
        _ endpoint: some Endpoint, built: URLRequest, kind: CachePolicy.Kind, sendsNothing: Bool, interceptor: (any RequestInterceptor)?
    ) async throws -> Response? {
        guard cache != nil, kind != .disabled, kind != .reload else { return nil }
        var mode = TransferMode()
        mode.cachePolicy = sendsNothing ? nil : .preview   // nil: the endpoint's own policy
        do {
            // As response(_:) consults it: the app's own preconditions and ranges answered alike.
            let consultation = try await consultCacheAnswering(
                built, for: endpoint, chain: chain(with: interceptor), ownInterceptor: interceptor != nil,
                context: RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: nil), mode: mode)
            guard case .answer(var response, let result, _) = consultation else { return nil }
            // As response(_:) validates a cache answer (the envelope's error for an unacceptable status included).
            if let (error, _) = try validationFailure(of: response, for: endpoint, inMemory: false) {
                if sendsNothing { throw error }
                return nil
            }
            response.storedReport = CallReport(statusCodes: [], duration: 0, cache: result)
            return response
        } catch NetworkError.notCached {
            return nil
        }
    }
}
