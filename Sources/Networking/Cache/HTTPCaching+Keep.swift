import Foundation

/// The rules of ``CachePolicy/keepForOffline(upTo:)`` beside the HTTP rules: which stored entries answer
/// online, and how long a kept copy may answer when the server cannot.
extension HTTPCaching {
    /// Whether `entry` may be used by the HTTP rules (a hit, a revalidation, `stale-while-revalidate`,
    /// `stale-if-error`, ``CachePolicy/cacheElseLoad``, …): every entry stored by the HTTP rules, and a
    /// kept one only when the HTTP rules would have stored its response too. A copy kept only because of
    /// ``CachePolicy/keepForOffline(upTo:)`` (its response said `no-store`, or had neither validator nor
    /// freshness) answers nothing online, under any policy: only a `keepForOffline` call whose server
    /// cannot answer (``keptCopyAnswers(_:keep:now:)``).
    static func answersOnline(_ entry: CachedResponse) -> Bool {
        entry.keptUntil == nil || allowsStoring(status: entry.statusCode, headers: entry.headers, responseDate: entry.responseDate)
    }

    /// Whether the keep time of `entry` has passed at `now`: such an entry never answers and is removed.
    static func keepHasExpired(_ entry: CachedResponse, now: Date) -> Bool {
        entry.keptUntil.map { now >= $0 } ?? false
    }

    /// Whether `entry` may answer a ``CachePolicy/keepForOffline(upTo:)`` call of `keep` seconds whose
    /// server cannot answer, at `now`, whatever its response's caching headers say: it was stored (or
    /// last refreshed) less than `keep` seconds ago, and its own keep time has not passed (an entry kept
    /// under a longer policy counts from when it was stored, the shorter of the two).
    static func keptCopyAnswers(_ entry: CachedResponse, keep: TimeInterval, now: Date) -> Bool {
        !keepHasExpired(entry, now: now) && now < entry.responseDate.addingTimeInterval(keep)
    }

    /// `entry` marked kept for `keep` seconds from its `responseDate` (after a `304` refreshed it).
    static func kept(_ entry: CachedResponse, for keep: TimeInterval) -> CachedResponse {
        var kept = entry
        kept.keptUntil = entry.responseDate.addingTimeInterval(keep)
        return kept
    }
}
