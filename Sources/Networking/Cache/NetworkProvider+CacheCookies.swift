import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Whether the session may add a `Cookie` of its own cookie store to a request as it sends it (its
    /// configuration sets cookies and has a store): then the request as built does not show the
    /// `Cookie` sent, and the cache neither stores nor answers with a response that varies on `Cookie`
    /// (``HTTPCaching/mayVary(on:sessionAddsCookies:)``). Read only for such a response: the session
    /// hands out a copy of its configuration.
    var sessionAddsCookies: Bool {
        let configuration = urlSession.configuration
        return configuration.httpShouldSetCookies && configuration.httpCookieStorage != nil
    }

    /// Whether the session would send a cookie of its own store with a request to `url`: then an answer
    /// may be about whoever those cookies sign in, though the request as built carries no credential. Read
    /// only when ``CachePolicy/keepForOffline(upTo:)`` would keep an answer the HTTP rules would not store.
    func sessionSendsCookies(to url: URL?) -> Bool {
        let configuration = urlSession.configuration
        guard configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage, let url else { return false }
        return !(storage.cookies(for: url) ?? []).isEmpty
    }
}
