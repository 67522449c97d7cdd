import Foundation

// Deprecated API, kept so that apps written against an earlier version compile (with a warning that says
// what to use instead). Each shim stays for the rest of the major version (README, "Versioning").

extension AuthInterceptor {
    /// Creates an interceptor whose refresh closure receives only the current credential.
    ///
    /// Deprecated: pass a ``Refresh`` closure, which also receives the `network` to send the refresh
    /// through. A refresh sent through `network` gets no token and never triggers a refresh itself; one
    /// sent through a provider of the app's own is recognized only while the closure runs (see
    /// ``AuthInterceptor``). The other parameters are those of
    /// ``init(baseURL:additionalScope:store:header:expiredStatusCodes:refreshLeeway:refreshWindow:readsTokenExpiry:isRejection:now:refresh:)``.
    ///
    /// ```swift
    /// // Before:                                   // Now:
    /// AuthInterceptor(baseURL: api) { old in       AuthInterceptor(baseURL: api) { old, network in
    ///     try await refresh(old)                        try await refresh(old, through: network)
    /// }                                            }
    /// ```
    @available(*, deprecated, message: "use a refresh closure that also takes the network: { credential, network in … }")
    public init(
        baseURL: URL,
        additionalScope: [URL] = [],
        store: any CredentialStore = InMemoryCredentialStore(),
        header: AuthorizationHeader = .bearer,
        expiredStatusCodes: Set<Int> = [401],
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        readsTokenExpiry: Bool = true,
        isRejection: (@Sendable (any Error) -> Bool)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        refresh: @escaping @Sendable (_ credential: Credential) async throws -> Credential
    ) {
        self.init(
            baseURL: baseURL, additionalScope: additionalScope, store: store, header: header, expiredStatusCodes: expiredStatusCodes,
            refreshLeeway: refreshLeeway, refreshWindow: refreshWindow, readsTokenExpiry: readsTokenExpiry, isRejection: isRejection,
            now: now, refresh: { credential, _ in try await refresh(credential) })
    }
}
