import Foundation

// Deprecated API, kept so that apps written against an earlier version compile (with a warning that says
// what to use instead). Each shim stays for the rest of the major version (README, "Versioning").

extension AuthInterceptor {
    /// Creates an interceptor whose refresh closure receives only the current credential.
    ///
    /// Deprecated: pass a ``Refresh`` closure, which also receives the `network` to send the refresh
    /// through. A refresh sent through `network` gets no token and never triggers a refresh itself; one
    /// sent through a provider of the app's own is recognized only while the closure runs (see
    /// ``AuthInterceptor``). `isRejection` adds to the status rule, as in the deprecated initializer that takes
    /// it and a ``Refresh`` closure; the other parameters are those of
    /// ``init(baseURL:additionalScope:store:header:expiredStatusCodes:refreshLeeway:refreshWindow:readsTokenExpiry:now:refresh:)``.
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
            refreshLeeway: refreshLeeway, refreshWindow: refreshWindow, readsTokenExpiry: readsTokenExpiry,
            rejection: isRejection.map(RefreshRejection.statusRule(or:)) ?? .statusRule, now: now, refresh: { credential, _ in try await refresh(credential) })
    }

    /// Creates an interceptor whose `isRejection` judges more refresh errors a rejected refresh token, **in
    /// addition to** the status rule (see ``RefreshRejection``).
    ///
    /// Deprecated, because its meaning changed: `isRejection` used to *replace* the status rule, so that a
    /// plain `401 invalid_grant` (RFC 6749 §5.2) to the refresh no longer ended the session when the closure
    /// did not name it; it now adds to the rule. Say which you mean:
    /// `rejection: .statusRule(or: isRejection)` is what this initializer now does, `rejection: .only(isRejection)`
    /// is what it did before. The other parameters are those of
    /// ``init(baseURL:additionalScope:store:header:expiredStatusCodes:refreshLeeway:refreshWindow:readsTokenExpiry:now:refresh:)``.
    ///
    /// ```swift
    /// // Before:                                      // Now, the same meaning:
    /// AuthInterceptor(baseURL: api,                   AuthInterceptor(baseURL: api,
    ///     isRejection: { $0 is RefusalError },            rejection: .statusRule(or: { $0 is RefusalError }),
    ///     refresh: refresh)                               refresh: refresh)
    /// ```
    @available(
        *, deprecated,
        message: "isRejection: now adds to the status rule: use rejection: .statusRule(or:) for that, or .only(_:) to replace it as before"
    )
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
        refresh: @escaping Refresh
    ) {
        self.init(
            baseURL: baseURL, additionalScope: additionalScope, store: store, header: header, expiredStatusCodes: expiredStatusCodes,
            refreshLeeway: refreshLeeway, refreshWindow: refreshWindow, readsTokenExpiry: readsTokenExpiry,
            rejection: isRejection.map(RefreshRejection.statusRule(or:)) ?? .statusRule, now: now, refresh: refresh)
    }
}
