import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// The copy ``CachePolicy/keepForOffline(upTo:)`` kept, as the answer of a call whose server cannot
    /// answer (a transport failure, the deadline, a 5xx, or `only-if-cached`), whatever its response's
    /// caching headers say (`no-store`, `no-cache`, `must-revalidate`: the app's explicit choice, a
    /// deliberate deviation from RFC 9111 §4.2.4 and §5.2.2.2); `nil` under another policy, without a
    /// copy, or when the copy is older than the policy's seconds or past its own keep time
    /// (``HTTPCaching/keptCopyAnswers(_:keep:now:)``). The caller marks it ``CacheResult/staleIfError``.
    /// Also for cached-then-fresh's network part (``CachePolicy/revalidate``) of a `keepForOffline`
    /// endpoint, which then yields the copy, marked stale, when it showed nothing before.
    func keptCopyResponse(use: CacheUse, now: Date) -> Response? {
        let keep = use.policy.keepSeconds ?? (use.policy.kind == .revalidate ? use.keep : nil)
        guard let keep, let kept = use.keptCopy, HTTPCaching.keptCopyAnswers(kept, keep: keep, now: now) else { return nil }
        return cachedResponse(kept, for: use.built, age: HTTPCaching.currentAge(of: kept, now: now))
    }
}
