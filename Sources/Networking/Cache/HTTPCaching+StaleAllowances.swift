import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The grants to use a stale entry that RFC 5861 adds to RFC 9111: `stale-while-revalidate` (§3) and
/// `stale-if-error` (§4), as pure functions beside the rules in `HTTPCaching.swift`.
extension HTTPCaching {
    /// Whether `entry`, stale at `now`, may answer `request` at once while it is revalidated in the
    /// background: its response says `stale-while-revalidate=N` with N > 0 and it is stale by no more than N
    /// seconds (RFC 5861 §3, "up to the indicated number of seconds": `=0` grants nothing, not even at a
    /// staleness of exactly 0); its response does not forbid serving it stale (`must-revalidate`, `no-cache`:
    /// RFC 9111 §4.2.4); and the request does not ask for a validated or fresh answer (`no-cache`, `max-age`,
    /// `min-fresh`, `Pragma: no-cache`: RFC 9111 §5.2.1.1, §5.2.1.3, §5.2.1.4, §5.4).
    static func mayServeWhileRevalidating(_ entry: CachedResponse, for request: URLRequest, now: Date) -> Bool {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))
        guard let window = control.staleWhileRevalidate, window > 0, !control.mustRevalidate, !control.noCache else { return false }
        if let requestControl = requestControl(of: request),
            requestControl.noCache || requestControl.maxAge != nil || requestControl.minFresh != nil
        {
            return false
        }
        return staleness(of: entry, now: now) <= window
    }

    /// The most seconds `entry` may be past its freshness and still answer `request` when the server cannot,
    /// or `nil` when nothing allows it:
    /// - when `serverError` (a 500, 502, 503, 504 or no answer at all: RFC 5861 §4's "error"), the
    ///   `stale-if-error` directive that applies: the request's when it has one — the most stale it accepts,
    ///   narrower or wider than the response's (RFC 5861 §4: "its scope of application is the request it
    ///   appears in") — else the response's, unless the request asks for a validated answer (`no-cache`,
    ///   `max-age=0`, `Pragma: no-cache`: a pull-to-refresh opts out of the response's grant, RFC 9111
    ///   §5.2.1.1, §5.2.1.4, §5.4);
    /// - the larger of that and `policyAllowance` (``CachePolicy/staleIfError(upTo:)``'s, for any failure it
    ///   covers): the app's explicit policy is its own choice, which no header narrows.
    ///
    /// `nil` too when the response forbids serving it stale (`must-revalidate`, `no-cache`: RFC 9111 §4.2.4,
    /// §5.2.2.2 — RFC 5861 does not lift them).
    static func staleIfErrorAllowance(of entry: CachedResponse, for request: URLRequest, policyAllowance: TimeInterval?, serverError: Bool)
        -> TimeInterval?
    {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))
        guard !control.mustRevalidate, !control.noCache else { return nil }
        guard serverError else { return policyAllowance }
        let requested = requestControl(of: request)
        let directive: TimeInterval?
        if let requested, let seconds = requested.staleIfError {
            directive = seconds
        } else if let requested, requested.noCache || requested.maxAge == 0 {
            directive = nil
        } else {
            directive = control.staleIfError
        }
        guard let directive, let policyAllowance else { return directive ?? policyAllowance }
        return max(directive, policyAllowance)
    }

    /// Whether a failure with `status` (or none, when no response came) is an "error" in RFC 5861 §4's
    /// sense: "any situation that would result in a 500, 502, 503, or 504 HTTP response status code".
    static func isStaleIfErrorFailure(status: Int?) -> Bool {
        switch status {
        case nil, 500?, 502?, 503?, 504?: return true
        default: return false
        }
    }
}
