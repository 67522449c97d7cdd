import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An adapter that can tell, without waiting, what it would make of a request now: the provider asks it
/// again for a call that waited in the queue for its slot, so that the call sends what the adapter gives
/// *when it is sent*, not what it gave before it queued. The usual case is a token refreshed while the call
/// waited: with a per-host limit, a storm of calls whose token expired would otherwise send every queued
/// call with the dead token, each meeting a 401 and a resend (RFC 9110 §15.5.2). Nothing waits while a
/// slot is held (no deadlock: see ``NetworkProvider/takeSlot(for:context:deadline:)``): a call whose
/// adapter would wait (a refresh runs) gives its slot back, adapts, and takes its place in the queue again.
protocol ReadyAdapting: Sendable {
    /// What the adapter would make of `built` now (see ``ReadyAdaptation``).
    func adaptation(of built: URLRequest, for context: RequestContext) -> ReadyAdaptation
}

/// What an adapter would make of a request now (see ``ReadyAdapting``).
enum ReadyAdaptation {
    /// The request as it adapts it now, without waiting.
    case ready(URLRequest)
    /// Its adapt would wait (a token refresh runs or is due).
    case waits
    /// It cannot tell: the request adapted before is sent.
    case unknown
}

extension AuthInterceptor: ReadyAdapting {
    /// ``adapt(_:for:)`` when the token is ready (``readyToken()``: no refresh runs or is due), and for a
    /// request it does not authenticate; ``ReadyAdaptation/waits`` otherwise, and ``ReadyAdaptation/unknown``
    /// for an outbox's mutation (its account is checked on the actor).
    nonisolated func adaptation(of built: URLRequest, for context: RequestContext) -> ReadyAdaptation {
        guard needsToken(built, context) else { return .ready(built) }
        guard context.boundAccount == nil else { return .unknown }
        guard let token = readyToken() else { return .waits }
        return .ready(header.apply(token, to: built))
    }
}

extension Interceptor: ReadyAdapting {
    /// Every adapter's ``ReadyAdapting/adaptation(of:for:)`` in order, when each of them can tell;
    /// ``ReadyAdaptation/unknown`` when one cannot (an adapter of the app's: it may wait, or sign what the
    /// others added), ``ReadyAdaptation/waits`` when one would wait.
    func adaptation(of built: URLRequest, for context: RequestContext) -> ReadyAdaptation {
        var request = built
        for adapter in adapters {
            guard let ready = adapter as? any ReadyAdapting else { return .unknown }
            switch ready.adaptation(of: request, for: context) {
            case .ready(let adapted): request = adapted
            case .waits: return adapters.allSatisfy { $0 is any ReadyAdapting } ? .waits : .unknown
            case .unknown: return .unknown
            }
        }
        return .ready(request)
    }
}
