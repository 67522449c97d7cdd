import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One attempt's chain of redirects: the request the attempt sent first (its origin is the call's own,
/// its headers what the endpoint and the interceptors set for it), and whether a hop has left that origin.
///
/// Which headers a hop carries is decided here, on the URL the hop really goes to: after a
/// ``RedirectBehavior/modify(_:)`` closure changed it too, whatever path led there (RFC 9110 §15.4: the
/// target of a redirect is another resource, which may be anyone's).
///
/// | the hop goes to | it carries |
/// |---|---|
/// | the call's own origin, no hop having left it | the current hop's headers, as they are |
/// | the call's own origin after a hop left it: the exact URL a `GET` or `HEAD` attempt started from, by `GET` or `HEAD` | the attempt's headers again (the token included) |
/// | the call's own origin after a hop left it: any other URL or method | the safe headers only |
/// | the foreign origin the current hop is at | the current hop's headers, as they are (already stripped) |
/// | any other origin | the safe headers only |
///
/// The safe headers are the attempt's ``RedirectPolicy/crossOriginSafeHeaders`` that no interceptor set
/// (an adapter may put a session in `User-Agent`), plus the ``kept`` headers.
struct RedirectChain {
    /// The request the attempt sent first, as the interceptors adapted it.
    let attempt: URLRequest
    /// The origin of ``attempt``: the call's own.
    let home: Origin?
    /// The names (lower-cased) of the headers the interceptors added or changed in ``attempt``.
    let adaptedHeaders: Set<String>
    /// Header names (lower-cased) that go to every hop whatever its origin: the routing header of a
    /// URL protocol the provider's session sends through (see ``HeaderRoutedURLProtocol``); empty in an app.
    let kept: Set<String>
    /// Whether a hop followed so far went to another origin than ``home``.
    private(set) var hasLeftOrigin = false

    init(attempt: URLRequest, adaptedHeaders: Set<String>, kept: Set<String> = []) {
        self.attempt = attempt
        self.home = attempt.url.map(Origin.init)
        self.adaptedHeaders = Set(adaptedHeaders.map { $0.lowercased() })
        self.kept = kept
    }

    /// Notes that `next` was sent.
    mutating func didFollow(to next: URLRequest) {
        if next.url.map(Origin.init) != home { hasLeftOrigin = true }
    }

    /// Whether `target` is in the call's own origin.
    func isHome(_ target: URL) -> Bool {
        home == Origin(target)
    }

    /// The header fields of a hop to `target` by `method`, sent after `current` (see the table above).
    func headers(forHopTo target: URL, method: String, after current: URLRequest) -> [String: String] {
        let destination = Origin(target)
        let currentOrigin = current.url.map(Origin.init)
        if destination == home {
            let left = hasLeftOrigin || currentOrigin != home
            if !left { return current.allHTTPHeaderFields ?? [:] }
            if Self.isSafeRead(method), Self.isSafeRead(attempt.httpMethod ?? "GET"),
                Self.withoutFragment(target) == attempt.url.map(Self.withoutFragment)
            {
                return attempt.allHTTPHeaderFields ?? [:]   // back to the very URL the call asked for
            }
            return safeHeaders
        }
        if currentOrigin == destination { return current.allHTTPHeaderFields ?? [:] }
        return safeHeaders
    }

    /// The attempt's ``RedirectPolicy/crossOriginSafeHeaders`` that no interceptor set, and the ``kept`` ones.
    var safeHeaders: [String: String] {
        var safe: [String: String] = [:]
        for (name, value) in attempt.allHTTPHeaderFields ?? [:] {
            let lowered = name.lowercased()
            if kept.contains(lowered) || (RedirectPolicy.crossOriginSafeHeaders.contains(lowered) && !adaptedHeaders.contains(lowered)) {
                safe[name] = value
            }
        }
        return safe
    }

    /// Whether `method` is `GET` or `HEAD`: a request the app authorised to read, which a detour may repeat.
    private static func isSafeRead(_ method: String) -> Bool {
        method == "GET" || method == "HEAD"
    }

    /// `url` as text without its fragment, which never goes on the wire.
    private static func withoutFragment(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }
}
