import Foundation

/// How a call uses the provider's ``ResponseCache``: set a default with `NetworkProvider(cachePolicy:)`
/// and override it per endpoint with ``Endpoint/cachePolicy``.
///
/// Only `GET` and `HEAD` calls are answered from the cache and stored in it; downloads and streams never
/// are. Whatever the policy, a successful `POST`, `PUT`, `PATCH` or `DELETE` removes the entries of its
/// URL. See Docs/Caching.md for the HTTP rules.
///
/// ```swift
/// struct Profile: Endpoint {
///     var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
///     var path: String { "/me" }
///     var cachePolicy: CachePolicy? { .staleIfError(upTo: 86_400) }   // offline: up to a day old
/// }
/// ```
public struct CachePolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        case http, reload, cacheElseLoad, cacheOnly, disabled
        case staleIfError(TimeInterval)
        /// ``CachePolicy/keepForOffline(upTo:)``: the HTTP rules online, and a copy of every successful answer
        /// kept this many seconds for when the server cannot answer.
        case keepForOffline(TimeInterval)
        /// Internal: always ask the server, conditionally when an entry has a validator (cached-then-fresh).
        case revalidate
        /// Internal: any stored entry, however stale, and never a request: the value cached-then-fresh
        /// shows before it asks the server (marked stale, and always followed by the server's answer).
        case preview
    }

    let kind: Kind

    /// The HTTP rules of a private cache (RFC 9111), the default: a fresh entry answers without a
    /// request; a stale one with a validator (`ETag`, `Last-Modified`) is revalidated with a conditional
    /// request, whose `304 Not Modified` returns the stored body; anything else loads and stores what
    /// the response allows. RFC 5861's grants apply: a stale entry within its response's
    /// `stale-while-revalidate=N` answers at once (``CacheResult/staleWhileRevalidate``) while the provider
    /// revalidates it in the background, and one within the response's or the request's `stale-if-error=N`
    /// answers when the server answers 500, 502, 503 or 504 or cannot be reached
    /// (``CacheResult/staleIfError``). Neither applies to an entry whose response said `must-revalidate` or
    /// `no-cache`.
    public static let http = CachePolicy(kind: .http)
    /// Always loads, ignoring any stored entry; the response is stored as the HTTP rules allow.
    public static let reload = CachePolicy(kind: .reload)
    /// Answers with any stored entry, however stale (the report says so), else loads as ``http``. A
    /// stale entry whose response said `must-revalidate`, or any whose response said `no-cache`, is
    /// revalidated instead: RFC 9111 §4.2.4 forbids answering with it unvalidated.
    public static let cacheElseLoad = CachePolicy(kind: .cacheElseLoad)
    /// Answers with any stored entry, however stale, and never sends a request: with nothing stored the
    /// call fails with ``NetworkError/notCached``. For an app that knows it is offline. A stale entry
    /// whose response said `must-revalidate`, or any whose response said `no-cache`, may not answer
    /// unvalidated (RFC 9111 §4.2.4): the call fails with ``NetworkError/notCached`` too.
    public static let cacheOnly = CachePolicy(kind: .cacheOnly)
    /// Neither reads nor stores entries (a successful unsafe call still removes its URL's entries).
    public static let disabled = CachePolicy(kind: .disabled)

    /// The HTTP rules, and when the server cannot answer — a transport failure (offline, a timeout, the
    /// deadline) or a 5xx status after every retry — a stored entry at most `seconds` past its freshness
    /// instead of the error, marked ``CacheResult/staleIfError``. A `stale-if-error=N` that allows more (for
    /// a 500, 502, 503, 504 or no answer, RFC 5861 §4) wins: the request's when it has one, else the
    /// response's unless the request says `no-cache` or `max-age=0`. No request header narrows `seconds`: it
    /// is the app's own choice. An entry whose response said `must-revalidate` or `no-cache` is never used so.
    public static func staleIfError(upTo seconds: TimeInterval) -> CachePolicy {
        CachePolicy(kind: .staleIfError(seconds.isNaN ? 0 : max(seconds, 0)))
    }

    /// The HTTP rules online, and a copy of every successful (2xx) answer kept on the store for `seconds`
    /// **whatever its caching headers say**, answered when the server cannot answer, to show something
    /// offline.
    ///
    /// Online it is ``http``: a fresh entry answers, a stale one is revalidated with its validators, and
    /// every successful answer (a `304` included) refreshes the kept copy, which is kept for `seconds` from
    /// that moment, not for the server's freshness. The copy is stored even when the response says
    /// `no-store`, `no-cache`, `private` or `must-revalidate`, or has no validator and no freshness — but
    /// such a copy answers nothing online: the call loads as if nothing were stored, and a call of the same
    /// URL under another policy never sees it.
    ///
    /// When the server cannot answer — a transport failure (offline), the deadline, or a 5xx after every
    /// retry — the kept copy answers instead while it is younger than `seconds`, marked
    /// ``CacheResult/staleIfError`` (`isStale`), even when its response said `no-store`, `no-cache` or
    /// `must-revalidate`: a deliberate deviation from RFC 9111 §4.2.4 and §5.2.2.2, the app's explicit
    /// choice. An older copy never answers and is removed.
    ///
    /// Never kept: an answer to a request that says `Cache-Control: no-store` (the app's own choice wins), a
    /// response whose `Vary` lists `*` (or `Cookie` while the session adds cookies: it could be another
    /// user's page), a redirected answer, and an authenticated call without an account. An authenticated
    /// call's copy is in its account's partition, removed on sign-out. The copy is on the store: with a
    /// ``DiskResponseCache``, on disk with its file protection. Never use it for a response that holds a
    /// secret. See Docs/Caching.md.
    ///
    /// `seconds` of 0 (or less) keeps nothing: the policy is then ``http``.
    ///
    /// ```swift
    /// var cachePolicy: CachePolicy? { .keepForOffline(upTo: 7 * 86_400) }   // a week
    /// ```
    public static func keepForOffline(upTo seconds: TimeInterval) -> CachePolicy {
        CachePolicy(kind: .keepForOffline(seconds.isNaN ? 0 : max(seconds, 0)))
    }

    /// The seconds ``keepForOffline(upTo:)`` keeps a copy, or `nil` for every other policy and for a keep
    /// of 0 seconds (which keeps nothing: the policy is then ``http``).
    var keepSeconds: TimeInterval? {
        if case .keepForOffline(let seconds) = kind, seconds > 0 { return seconds }
        return nil
    }

    /// Internal: what a cached-then-fresh call's network part uses.
    static let revalidate = CachePolicy(kind: .revalidate)
    /// Internal: what a cached-then-fresh call's stored value uses.
    static let preview = CachePolicy(kind: .preview)

    /// The policy's name, e.g. `http`, `staleIfError(upTo: 86400.0)` or `keepForOffline(upTo: 604800.0)`.
    public var description: String {
        switch kind {
        case .http: return "http"
        case .reload: return "reload"
        case .cacheElseLoad: return "cacheElseLoad"
        case .cacheOnly: return "cacheOnly"
        case .disabled: return "disabled"
        case .staleIfError(let seconds): return "staleIfError(upTo: \(seconds))"
        case .keepForOffline(let seconds): return "keepForOffline(upTo: \(seconds))"
        case .revalidate: return "revalidate"
        case .preview: return "preview"
        }
    }
}

/// How the cache took part in a call: ``CallReport/cache`` (`nil` when the call did not use the cache:
/// no cache, a policy of ``CachePolicy/disabled``, a method other than `GET`/`HEAD`, a download or a
/// stream).
///
/// ```swift
/// let response = try await provider.response(UserAPI.user(id: 1))
/// if response.report.cache?.isStale == true { showOfflineBanner() }
/// ```
public struct CacheResult: Sendable, Hashable, CustomStringConvertible {
    private let name: String

    /// Answered from a fresh entry: no request was sent and no interceptor ran.
    public static let hit = CacheResult(name: "hit")
    /// Answered from a stale entry without asking the server (``CachePolicy/cacheElseLoad``,
    /// ``CachePolicy/cacheOnly``).
    public static let staleHit = CacheResult(name: "stale hit")
    /// The server answered a conditional request with `304 Not Modified`: the stored body, with the
    /// stored status and the headers the 304 updated.
    public static let revalidated = CacheResult(name: "revalidated")
    /// The server's full answer (stored when the HTTP rules allow).
    public static let miss = CacheResult(name: "miss")
    /// The server could not answer; a stale entry answered instead (``CachePolicy/staleIfError(upTo:)``, a
    /// `stale-if-error` directive of the response or the request, RFC 5861 §4, or the copy
    /// ``CachePolicy/keepForOffline(upTo:)`` kept).
    public static let staleIfError = CacheResult(name: "stale-if-error")
    /// Answered at once from a stale entry whose response allows it for a while (`Cache-Control:
    /// stale-while-revalidate=N`, RFC 5861 §3), while the provider revalidates the entry in the background.
    public static let staleWhileRevalidate = CacheResult(name: "stale-while-revalidate")

    /// Whether the body came from the cache (every result but ``miss``).
    public var isFromCache: Bool { self != .miss }
    /// Whether the body is older than its freshness allows (``staleHit``, ``staleIfError`` and
    /// ``staleWhileRevalidate``).
    public var isStale: Bool { self == .staleHit || self == .staleIfError || self == .staleWhileRevalidate }

    /// `hit`, `stale hit`, `revalidated`, `miss`, `stale-if-error` or `stale-while-revalidate`.
    public var description: String { name }
}
