import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The grants to use a stale entry that RFC 5861 adds to RFC 9111: `stale-while-revalidate` (§3) and
/// `stale-if-error` (§4), as pure functions beside the rules in `HTTPCaching.swift`.
extension HTTPCaching {
    /// Whether `entry`, stale at `now`, may answer `request` at once while it is revalidated in the
    /// background: its response says `stale-while-revalidate=N` and it is stale by no more than N seconds
    /// (RFC 5861 §3, "up to the indicated number of seconds"); its response does not forbid serving it stale
    /// (`must-revalidate`, `no-cache`: RFC 9111 §4.2.4); and the request does not ask for a validated or
    /// fresh answer (`no-cache`, `max-age`, `min-fresh`, `Pragma: no-cache`: RFC 9111 §5.2.1.1, §5.2.1.3,
    /// §5.2.1.4, §5.4).
    static func mayServeWhileRevalidating(_ entry: CachedResponse, for request: URLRequest, now: Date) -> Bool {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))
        guard let window = control.staleWhileRevalidate, !control.mustRevalidate, !control.noCache else { return false }
        let requestControl =
            request.value(forHTTPHeaderField: "Cache-Control").map { CacheControl(header: $0) }
            ?? request.value(forHTTPHeaderField: "Pragma").map { CacheControl(header: nil, pragma: $0) }
        if let requestControl, requestControl.noCache || requestControl.maxAge != nil || requestControl.minFresh != nil { return false }
        return staleness(of: entry, now: now) <= window
    }

    /// The most seconds `entry` may be past its freshness and still answer `request` when the server cannot:
    /// the largest of `policyAllowance` (``CachePolicy/staleIfError(upTo:)``'s, for any failure it covers)
    /// and, when `serverError` (a 500, 502, 503, 504 or no answer at all: RFC 5861 §4's "error"), the
    /// `stale-if-error` of the response and of the request (RFC 5861 §4). `nil` when nothing allows it, or
    /// when the response forbids serving it stale (`must-revalidate`, `no-cache`: RFC 9111 §4.2.4,
    /// §5.2.2.2 — RFC 5861 does not lift them).
    static func staleIfErrorAllowance(of entry: CachedResponse, for request: URLRequest, policyAllowance: TimeInterval?, serverError: Bool)
        -> TimeInterval?
    {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))
        guard !control.mustRevalidate, !control.noCache else { return nil }
        var allowances = [policyAllowance]
        if serverError {
            allowances.append(control.staleIfError)
            allowances.append(request.value(forHTTPHeaderField: "Cache-Control").flatMap { CacheControl(header: $0).staleIfError })
        }
        return allowances.compactMap { $0 }.max()
    }

    /// Whether a failure with `status` (or none, when no response came) is an "error" in RFC 5861 §4's
    /// sense: "any situation that would result in a 500, 502, 503, or 504 HTTP response status code".
    static func isStaleIfErrorFailure(status: Int?) -> Bool {
        guard let status else { return true }
        return [500, 502, 503, 504].contains(status)
    }
}
