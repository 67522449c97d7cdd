import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An adapter that can tell, without waiting, what it would make of a request now: the provider asks it
/// again for a call that waited in the queue for its slot, so that the call sends what the adapter gives
/// *when it is sent*, not what it gave before it queued. The usual case is a token refreshed while the call
/// waited: with a per-host limit, a storm of calls whose token expired would otherwise send every queued
/// call with the dead token, each meeting a 401 and a resend (RFC 9110 §15.5.2). Nothing waits while the
/// slot is held (no deadlock: see ``NetworkProvider/takeSlot(for:context:deadline:)``).
protocol ReadyAdapting: Sendable {
    /// `built` as the adapter would adapt it now, when that needs no wait; `nil` when it would wait (a
    /// refresh runs or is due) or cannot tell: the request adapted before the wait is sent then.
    func adaptedAtOnce(_ built: URLRequest, for context: RequestContext) -> URLRequest?
}

extension AuthInterceptor: ReadyAdapting {
    /// ``adapt(_:for:)`` when the token is ready (``readyToken()``: no refresh runs or is due), and for a
    /// request it does not authenticate; `nil` otherwise, and for an outbox's mutation (its account is
    /// checked on the actor).
    nonisolated func adaptedAtOnce(_ built: URLRequest, for context: RequestContext) -> URLRequest? {
        guard needsToken(built, context) else { return built }
        guard context.boundAccount == nil, let token = readyToken() else { return nil }
        return header.apply(token, to: built)
    }
}

extension Interceptor: ReadyAdapting {
    /// Every adapter's ``ReadyAdapting/adaptedAtOnce(_:for:)`` in order, when each of them can tell; `nil`
    /// when one cannot (an adapter of the app's: it may wait, or sign what the others added).
    func adaptedAtOnce(_ built: URLRequest, for context: RequestContext) -> URLRequest? {
        var request = built
        for adapter in adapters {
            guard let ready = (adapter as? any ReadyAdapting)?.adaptedAtOnce(request, for: context) else { return nil }
            request = ready
        }
        return request
    }
}
