import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Attaches the access token to requests for your API and refreshes it, once, when it expires.
///
/// - **Adapt**: puts the token in the configured header, only on requests whose scheme, host and port
///   are in scope (by default the origin of `baseURL`) and whose endpoint ``Endpoint/requiresAuthentication``.
///   Throws ``NetworkError/missingCredential`` without sending when there is no credential. When the
///   credential's expiry is known (``Credential/expiresAt``, or the `exp` claim of a JWT access token)
///   and within the leeway, refreshes first; if that refresh fails for a transient reason, every
///   request waiting on it is sent with the current token (the server's clock decides whether it still
///   works), and no other proactive refresh starts for ``proactiveRefreshPause`` seconds.
/// - **Retry**: on an expired-token status (401 by default) for such a request: if the request carried
///   an older token than the current one, resends at once; otherwise starts **one** refresh that every
///   request failing with that token waits for, then resends them all. A call is retried for
///   authentication at most once. A 401 always means the token was not accepted. Other expired
///   statuses you configure (403, 419) may also mean something else ("forbidden"), so for them a token
///   that a refresh returned less than ``recentRefreshInterval`` seconds ago is not refreshed again and
///   cannot burn the refresh budget: the call fails with its own error, unless the store holds a newer
///   credential (another process refreshed), which is adopted and the call resent.
/// - **Refresh rejected** (the refresh call's last unacceptable HTTP status is 400, 401 or 403,
///   whatever the app's error mapper made of it, or it throws ``NetworkError/sessionExpired``): first
///   re-reads the store, since another process sharing it may have refreshed with the same refresh
///   token; if it holds another credential, that one is adopted and the requests resent. Otherwise
///   clears the credential, fails every waiting request with ``NetworkError/sessionExpired``, and sends
///   ``AuthEvent/sessionExpired`` once.
/// - **Refresh failed otherwise** (404, 5xx, offline, undecodable answer): waiting requests fail with
///   ``NetworkError/refreshFailed(_:)`` carrying the refresh's error; the credential is kept and a later
///   request tries again.
/// - More refreshes than ``RefreshWindow`` allows stop with ``NetworkError/excessiveRefresh(count:window:)``.
/// - **Sign-in or sign-out during a refresh** wins: the refresh is cancelled, its result ignored, and
///   the requests waiting on it go on at once with the new session. Store writes are
///   made one at a time, each writing the state the interceptor holds at that moment, so the store
///   always ends in the latest state.
/// - Until the next sign-in after a rejected refresh, calls that need a token fail with
///   ``NetworkError/sessionExpired``.
///
/// The refresh closure is yours. It receives the current credential and a `network` to send the
/// refresh through: the provider whose call needed the refresh, with the refresh's requests marked so
/// that they get no token and never trigger a refresh, however the endpoint is spelled. Requests sent
/// from inside the closure by other means (its own task, or tasks it starts) are treated the same way
/// while the refresh runs, and normally after it.
///
/// ```swift
/// let auth = AuthInterceptor(baseURL: api, store: store) { credential, network in
///     try await network.request(AuthAPI.refresh(refreshToken: credential.refreshToken), as: TokenResponse.self).credential
/// }
/// let provider = NetworkProvider(interceptor: auth)
/// ```
public actor AuthInterceptor: RequestInterceptor, CustomReflectable {
    /// Turns the current credential into a new one, usually by calling the app's refresh endpoint
    /// through `network` (or through a provider of the app's own).
    public typealias Refresh = @Sendable (_ credential: Credential, _ network: any NetworkProviding) async throws -> Credential

    /// A token that a refresh returned less than this many seconds ago is not refreshed again when a
    /// request fails with it with an expired status other than 401 (a 403 may mean "forbidden"): the
    /// failure is not about expiry (10 s).
    public static let recentRefreshInterval: TimeInterval = 10
    /// After a proactive refresh fails for a transient reason, no other proactive refresh starts for
    /// this many seconds while the current token is still valid (10 s).
    public static let proactiveRefreshPause: TimeInterval = 10
    /// The refresh statuses that mean the refresh token was rejected.
    public static let rejectionStatusCodes: Set<Int> = [400, 401, 403]

    /// The origins (scheme, host, port) whose requests get the token.
    public nonisolated let scope: Set<Origin>
    /// The origins of the URLs its scope checks read, made once for a run of requests to one host.
    private nonisolated let recentOrigin = RecentOrigin()
    /// How the token is put on a request.
    public nonisolated let header: AuthorizationHeader
    /// The statuses that mean "the access token expired".
    public nonisolated let expiredStatusCodes: Set<Int>
    /// Refresh proactively when the credential expires within this many seconds.
    public nonisolated let refreshLeeway: TimeInterval
    /// The refresh rate limit.
    public nonisolated let refreshWindow: RefreshWindow
    /// Whether the `exp` claim of a JWT access token counts as the expiry of a credential that has no
    /// ``Credential/expiresAt``.
    public nonisolated let readsTokenExpiry: Bool

    nonisolated let id: UUID
    /// The per-call note that marks a call as already retried for authentication (made once: it names ``id``).
    nonisolated let noteKey: String
    nonisolated let store: any CredentialStore
    nonisolated let refresh: Refresh
    nonisolated let rejection: RefreshRejection
    nonisolated let now: @Sendable () -> Date
    nonisolated let broadcaster = AuthEventBroadcaster()

    /// The credential in use; `expiry` and `heldAccessTokens` follow it.
    var credential: Credential? {
        didSet {
            if oldValue?.account != credential?.account {
                accountEpoch.bump()   // before the clearing is scheduled: a store that finishes later sees it
                accountChanges.send(credential?.account)   // outboxes hold or discard the previous account's mutations
                if let account = oldValue?.account { clearCachedResponses(of: account) }
            }
            expiry = credential.flatMap(expiry(of:))
            if let oldValue, oldValue.accessToken != credential?.accessToken {
                if heldAccessTokens.count >= 64 { heldAccessTokens.removeAll() }   // a bound, not a history
                heldAccessTokens.insert(oldValue.accessToken)
            }
            publishToken()
        }
    }
    /// Access tokens of credentials this interceptor held before the current one: the store is never
    /// read back into one of them.
    var heldAccessTokens: Set<String> = []
    /// Requests waiting for a running refresh (for tests). The call whose 401 started the refresh is not
    /// among them: it awaits the refresh task directly.
    var refreshWaiterCount = 0
    /// When ``credential``'s access token expires, if known. Set only with the credential (its `didSet`),
    /// before the token is published: the published token and its expiry never disagree.
    private(set) var expiry: Date?
    var isLoaded = false {
        didSet { publishToken() }
    }
    /// The store read that calls arriving before ``isLoaded`` wait for (see `loadedCredential()`).
    var storeRead: SharedResult<Void>?
    /// Set when a refresh token was rejected, until the next sign-in or sign-out.
    var sessionDidExpire = false {
        didSet { publishToken() }
    }
    /// Bumped by sign-in and sign-out: a refresh started before is ignored when it ends.
    var generation = 0
    var refreshTask: RefreshTask? {
        didSet { publishToken() }
    }
    /// The token an ordinary adapt takes without a turn of this actor (see ``PublishedToken``).
    nonisolated let publishedToken = PublishedToken()
    /// The still-valid credential a running *proactive* refresh started from: requests waiting on it
    /// are sent with this one if the refresh fails for a transient reason.
    var proactiveFallback: Credential?
    var refreshDates: [Date] = []
    /// A refreshed access token that already expired within the leeway when it arrived: it is not
    /// refreshed proactively again (the expired-status path still refreshes it).
    var shortLivedToken: String?
    /// The access token the last refresh returned, and when.
    var lastRefresh: (accessToken: String, date: Date)?
    /// No proactive refresh starts before this date (set when one failed for a transient reason).
    var proactivePausedUntil: Date?
    /// The last write to the store; each write waits for the one before it.
    var lastStoreWrite: Task<Void, any Error>?
    /// The response caches of the providers this interceptor authenticates for (see ``Credential/account``).
    nonisolated let caches = AttachedCaches()
    /// Bumped whenever the account changes (see ``AccountEpoch``).
    nonisolated let accountEpoch = AccountEpoch()
    /// The account signed in after each change of account (`nil`: signed out), for the outboxes.
    nonisolated let accountChanges = Broadcaster<String?>(backlogLimit: 0)
    /// The last clearing of an account's cached responses; each waits for the one before it.
    var cacheClearing: Task<Void, Never>?

    /// Creates an interceptor that judges rejected refreshes by the status rule (see ``RefreshRejection``).
    ///
    /// - Parameters:
    ///   - baseURL: the API's base URL; its origin is the scope.
    ///   - additionalScope: more URLs whose origins also get the token.
    ///   - store: where the credential is kept; read once, then written on every change.
    ///   - header: the token's header; `.bearer` by default. Its name is redacted in every log, cURL
    ///     description and dump from then on, whatever it is.
    ///   - expiredStatusCodes: statuses meaning "token expired"; `[401]` by default (some APIs use 419).
    ///     An envelope failure that stands for one of them counts too (``EnvelopeFailure/standsForStatus``).
    ///   - refreshLeeway: refresh before sending when the known expiry is this close; 60 s by default.
    ///   - refreshWindow: the refresh rate limit; 5 in 30 s by default.
    ///   - readsTokenExpiry: use a JWT access token's `exp` claim when the credential has no expiry;
    ///     `true` by default.
    ///   - now: the clock, for tests.
    ///   - refresh: turns the current credential into a new one; see ``Refresh``.
    public init(
        baseURL: URL,
        additionalScope: [URL] = [],
        store: any CredentialStore = InMemoryCredentialStore(),
        header: AuthorizationHeader = .bearer,
        expiredStatusCodes: Set<Int> = [401],
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        readsTokenExpiry: Bool = true,
        now: @escaping @Sendable () -> Date = { Date() },
        refresh: @escaping Refresh
    ) {
        self.init(
            baseURL: baseURL, additionalScope: additionalScope, store: store, header: header, expiredStatusCodes: expiredStatusCodes,
            refreshLeeway: refreshLeeway, refreshWindow: refreshWindow, readsTokenExpiry: readsTokenExpiry, rejection: .statusRule,
            now: now, refresh: refresh)
    }

    /// Creates an interceptor that judges rejected refreshes by `rejection`: ``RefreshRejection/statusRule(or:)``
    /// adds the app's own refusal to the status rule, ``RefreshRejection/only(_:)`` replaces the status rule.
    /// The other parameters are those of
    /// ``init(baseURL:additionalScope:store:header:expiredStatusCodes:refreshLeeway:refreshWindow:readsTokenExpiry:now:refresh:)``.
    ///
    /// ```swift
    /// let auth = AuthInterceptor(baseURL: api, rejection: .statusRule(or: { ($0 as? APIError)?.code == "E_REFRESH" })) { credential, network in
    ///     try await network.request(AuthAPI.refresh(credential.refreshToken), as: Tokens.self).credential
    /// }
    /// ```
    public init(
        baseURL: URL,
        additionalScope: [URL] = [],
        store: any CredentialStore = InMemoryCredentialStore(),
        header: AuthorizationHeader = .bearer,
        expiredStatusCodes: Set<Int> = [401],
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        readsTokenExpiry: Bool = true,
        rejection: RefreshRejection,
        now: @escaping @Sendable () -> Date = { Date() },
        refresh: @escaping Refresh
    ) {
        let id = UUID()
        self.id = id
        self.noteKey = "AuthInterceptor.\(id)"
        self.scope = Set(([baseURL] + additionalScope).map(Origin.init))
        self.store = store
        self.header = header
        self.expiredStatusCodes = expiredStatusCodes
        self.refreshLeeway = refreshLeeway.isNaN ? 0 : max(refreshLeeway, 0)
        self.refreshWindow = refreshWindow
        self.readsTokenExpiry = readsTokenExpiry
        self.rejection = rejection
        self.now = now
        self.refresh = refresh
        SecretHeaderNames.register(header.name)
    }

    /// The error-based part of the default rejection test: ``NetworkError/invalidStatusCode(_:)`` 400,
    /// 401 or 403 (OAuth's `invalid_grant` is a 400), or ``NetworkError/sessionExpired``.
    public static func isRefreshTokenRejection(_ error: any Error) -> Bool {
        switch error as? NetworkError {
        case .invalidStatusCode(let status)?: return rejectionStatusCodes.contains(status)
        case .sessionExpired?: return true
        default: return false
        }
    }

    /// Shows the configuration, never the credential.
    public nonisolated var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "scope": scope.map(\.description).sorted(),
                "header": header.name,
                "expiredStatusCodes": expiredStatusCodes.sorted(),
                "refreshLeeway": refreshLeeway,
                "refreshWindow": refreshWindow,
            ], displayStyle: .class)
    }

    // MARK: Session

    /// A new stream of ``AuthEvent``s for this subscriber (any number may listen). It finishes when
    /// the interceptor is released; make the stream before the task that reads it, so that the task
    /// holds the stream and not the interceptor.
    ///
    /// ```swift
    /// let events = auth.events()
    /// Task { for await event in events { if case .sessionExpired = event { showSignIn() } } }
    /// ```
    public nonisolated func events() -> AsyncStream<AuthEvent> {
        broadcaster.subscribe()
    }

    /// Stores the credential a sign-in returned; later requests use it. A refresh still running for
    /// the previous session is ignored when it ends; requests waiting on it get this credential.
    /// Returns once the store holds it (or a later state); throws the store's error.
    public func signIn(with credential: Credential) async throws {
        startSession(with: credential)
        await cacheClearing?.value
        try await writeStore().value
    }

    /// Forgets the credential (and the cached responses of its ``Credential/account``); later requests that need one fail with ``NetworkError/missingCredential``.
    /// Returns once the store is cleared (or holds a later state); throws the store's error.
    public func signOut() async throws {
        if !isLoaded, let account = ((try? await store.load()) ?? nil)?.account {
            clearCachedResponses(of: account)   // signed out before any call read the store; its error is the write's to report
        }
        startSession(with: nil)
        await cacheClearing?.value
        try await writeStore().value
    }

    private func startSession(with credential: Credential?) {
        self.credential = credential
        isLoaded = true
        sessionDidExpire = false
        shortLivedToken = nil
        lastRefresh = nil
        proactivePausedUntil = nil
        proactiveFallback = nil
        generation += 1
        refreshTask?.cancel()   // its result is ignored: free its waiters now, with this session
        refreshTask = nil
    }

    /// The credential in use, read from the store the first time.
    public func currentCredential() async throws -> Credential? {
        try await loadedCredential()
    }

    // MARK: RequestInterceptor

    /// Puts the access token in the configured header of a request this interceptor authenticates (refreshing first when
    /// the token is known to expire within the leeway), or throws ``NetworkError/missingCredential``; returns other requests unchanged.
    public nonisolated func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        guard needsToken(request, context) else { return request }
        do {
            if let account = context.boundAccount {   // an outbox's mutation: checked and handed out in one turn of the actor
                return header.apply(try await accessToken(for: context, boundTo: account), to: request)
            }
            if let token = readyToken() { return header.apply(token, to: request) }   // no refresh due or running: no actor hop
            return header.apply(try await accessToken(for: context), to: request)
        } catch is CancellationError {
            throw NetworkError.cancelled
        }
    }

    /// Answers an expired-token status on a request this interceptor authenticated: retries once with a newer or
    /// refreshed credential, or fails with the refresh's error. Does not retry anything else. The status judged is
    /// the one the response's envelope failure stands for (``Response/envelopeStatusCode``: an `E401` inside a
    /// `200` is a 401) when there is one, else the HTTP status.
    public nonisolated func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        let status = response.map { $0.envelopeStatusCode ?? $0.statusCode }   // an envelope's "token expired" counts as its status
        guard let response, let status, expiredStatusCodes.contains(status),
            needsToken(request, context), context[noteKey] == nil,
            response.httpResponse.url.map({ scope.contains(recentOrigin.origin(of: $0)) }) ?? true,   // not a redirect target's 401
            header.token(in: response.request) != nil   // the hop that got the 401 carried the token (no redirect took it off)
        else { return .doNotRetry }
        context[noteKey] = true
        do {
            let replacement = try await credential(replacing: header.token(in: request), status: status, for: context)
            return replacement == nil ? .doNotRetry : .retry
        } catch is CancellationError {
            return .doNotRetryWithError(NetworkError.cancelled)
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    /// Whether `request` is one this interceptor authenticates: for an endpoint that requires
    /// authentication, in scope, and not sent by this interceptor's own refresh (see ``RefreshRun``).
    nonisolated func needsToken(_ request: URLRequest, _ context: RequestContext) -> Bool {
        guard context.refreshing != id, context.endpoint.requiresAuthentication, let url = request.url,
            scope.contains(recentOrigin.origin(of: url))
        else { return false }
        if let run = RefreshRun.current, run.interceptorID == id, run.isRunning { return false }
        return true
    }

    /// When `credential`'s access token expires, if known.
    nonisolated func expiry(of credential: Credential) -> Date? {
        credential.expiresAt ?? (readsTokenExpiry ? JWTExpiry.date(in: credential.accessToken) : nil)
    }
}
