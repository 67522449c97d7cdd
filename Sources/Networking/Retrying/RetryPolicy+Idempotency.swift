import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension RetryPolicy {
    /// Adds the call's idempotency key to a request whose method is not idempotent, when the policy has an
    /// ``idempotencyKeyHeader`` and the request has no such header yet (an endpoint's own key is kept):
    /// one random key per call, kept in its ``RequestContext``, so every attempt of the call carries the
    /// same one and no other call does. Other requests pass unchanged.
    ///
    /// The key is only sent when the policy adapts requests, as well as retrying them:
    ///
    /// ```swift
    /// let retry = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")
    /// let provider = NetworkProvider(interceptor: Interceptor(adapters: [auth, retry], retriers: [auth, retry]))
    /// ```
    ///
    /// A policy that only retries never retries such a call: the request it failed with has no key.
    public func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        guard let header = idempotencyKeyHeader, !HTTPMethod(rawValue: request.httpMethod ?? "GET").isIdempotent,
            request.value(forHTTPHeaderField: header) == nil
        else { return request }
        var request = request
        request.setValue(Self.idempotencyKey(for: context, header: header), forHTTPHeaderField: header)
        return request
    }

    /// Whether `request` carries a key in the ``idempotencyKeyHeader``, so that repeating it is safe.
    func carriesIdempotencyKey(_ request: URLRequest) -> Bool {
        guard let header = idempotencyKeyHeader else { return false }
        return request.value(forHTTPHeaderField: header)?.isEmpty == false
    }

    /// The call's key for `header`: made the first time it is asked for, then kept in `context` (a
    /// call's attempts are adapted one after another, never at once).
    private static func idempotencyKey(for context: RequestContext, header: String) -> String {
        let note = "RetryPolicy.idempotencyKey." + header.lowercased()
        if let key = context[note] as? String { return key }
        let key = UUID().uuidString
        context[note] = key
        return key
    }
}
