import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Attaches the access token to requests for your API and refreshes it, once, when it expires.
///
/// - **Adapt**: puts the token in the configured header, only on requests whose scheme, host and port
///   are in scope (by default the origin of `baseURL`) and whose endpoint ``Endpoint/requiresAuthentication``.
///   Throws ``NetworkError/missingCredential`` without sending when there is no credential. When the
///   credential's expiry is known and within the leeway, refreshes first.
/// - **Retry**: on an expired-token status (401 by default) for such a request: if the request carried
///   an older token than the current one, resends at once; otherwise starts **one** refresh that every
///   request failing with that token waits for, then resends them all. A call is retried for
///   authentication at most once.
/// - **Refresh rejected** (the refresh call fails with 400, 401 or 403, or throws
///   ``NetworkError/sessionExpired``): clears the credential, fails every waiting request with
///   ``NetworkError/sessionExpired``, and sends ``AuthEvent/sessionExpired`` once.
/// - **Refresh failed otherwise** (offline, timeout, 5xx): waiting requests fail with that error; the
///   credential is kept and a later request tries again.
/// - More refreshes than ``RefreshWindow`` allows stop with ``NetworkError/excessiveRefresh(count:window:)``.
/// - **Sign-in or sign-out during a refresh** wins: the refresh's result is ignored.
/// - Until the next sign-in after a rejected refresh, calls that need a token fail with
///   ``NetworkError/sessionExpired``.
///
/// The refresh closure is yours: it usually calls your refresh endpoint through a provider. Requests it
/// makes, in its own task, are never intercepted for authentication, however the endpoint is spelled.
///
/// ```swift
/// let auth = AuthInterceptor(baseURL: api, store: KeychainCredentialStore(service: "app", account: "me")) { old in
///     try await refreshProvider.request(AuthAPI.refresh(old.refreshToken), as: TokenResponse.self).credential
/// }
/// let provider = NetworkProvider(interceptor: auth)
/// ```
public actor AuthInterceptor: RequestInterceptor {
    /// Turns the current credential into a new one, usually by calling the app's refresh endpoint.
    public typealias Refresh = @Sendable (Credential) async throws -> Credential

    /// The origins (scheme, host, port) whose requests get the token.
    public nonisolated let scope: Set<Origin>
    /// How the token is put on a request.
    public nonisolated let header: AuthorizationHeader
    /// The statuses that mean "the access token expired".
    public nonisolated let expiredStatusCodes: Set<Int>
    /// Refresh proactively when the credential expires within this many seconds.
    public nonisolated let refreshLeeway: TimeInterval
    /// The refresh rate limit.
    public nonisolated let refreshWindow: RefreshWindow

    private nonisolated let id = UUID()
    private nonisolated let store: any CredentialStore
    private nonisolated let refresh: Refresh
    private nonisolated let isRejection: @Sendable (any Error) -> Bool
    private nonisolated let now: @Sendable () -> Date
    private nonisolated let broadcaster = AuthEventBroadcaster()

    private var credential: Credential?
    private var isLoaded = false
    /// Set when a refresh token was rejected, until the next sign-in or sign-out.
    private var sessionDidExpire = false
    /// Bumped by sign-in and sign-out: a refresh started before is ignored when it ends.
    private var generation = 0
    private var refreshTask: Task<Credential, any Error>?
    private var refreshDates: [Date] = []
    /// A refreshed access token that already expired within the leeway when it arrived: it is not
    /// refreshed proactively again (the expired-status path still refreshes it).
    private var shortLivedToken: String?

    /// Creates an interceptor.
    ///
    /// - Parameters:
    ///   - baseURL: the API's base URL; its origin is the scope.
    ///   - additionalScope: more URLs whose origins also get the token.
    ///   - store: where the credential is kept; read once, then written on every change.
    ///   - header: the token's header; `.bearer` by default.
    ///   - expiredStatusCodes: statuses meaning "token expired"; `[401]` by default (some APIs use 419).
    ///   - refreshLeeway: refresh before sending when the known expiry is this close; 60 s by default.
    ///   - refreshWindow: the refresh rate limit; 5 in 30 s by default.
    ///   - isRejection: whether a refresh error means the refresh token was rejected;
    ///     ``isRefreshTokenRejection(_:)`` by default.
    ///   - now: the clock, for tests.
    ///   - refresh: turns the current credential into a new one.
    public init(
        baseURL: URL,
        additionalScope: [URL] = [],
        store: any CredentialStore = InMemoryCredentialStore(),
        header: AuthorizationHeader = .bearer,
        expiredStatusCodes: Set<Int> = [401],
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        isRejection: @escaping @Sendable (any Error) -> Bool = AuthInterceptor.isRefreshTokenRejection,
        now: @escaping @Sendable () -> Date = { Date() },
        refresh: @escaping Refresh
    ) {
        self.scope = Set(([baseURL] + additionalScope).map(Origin.init))
        self.store = store
        self.header = header
        self.expiredStatusCodes = expiredStatusCodes
        self.refreshLeeway = refreshLeeway
        self.refreshWindow = refreshWindow
        self.isRejection = isRejection
        self.now = now
        self.refresh = refresh
    }

    /// The default test for a rejected refresh token: ``NetworkError/invalidStatusCode(_:)`` 400, 401
    /// or 403 (OAuth's `invalid_grant` is a 400), or ``NetworkError/sessionExpired``.
    public static func isRefreshTokenRejection(_ error: any Error) -> Bool {
        switch error as? NetworkError {
        case .invalidStatusCode(400)?, .invalidStatusCode(401)?, .invalidStatusCode(403)?, .sessionExpired?: return true
        default: return false
        }
    }

    // MARK: Session

    /// A new stream of ``AuthEvent``s for this subscriber (any number may listen).
    ///
    /// ```swift
    /// Task { for await event in auth.events() { if case .sessionExpired = event { showSignIn() } } }
    /// ```
    public nonisolated func events() -> AsyncStream<AuthEvent> {
        broadcaster.subscribe()
    }

    /// Stores the credential a sign-in returned; later requests use it. A refresh still running for
    /// the previous session is ignored when it ends; requests waiting on it get this credential.
    public func signIn(with credential: Credential) async throws {
        startSession(with: credential)
        try await store.save(credential)
    }

    /// Forgets the credential; later requests that need one fail with ``NetworkError/missingCredential``.
    public func signOut() async throws {
        startSession(with: nil)
        try await store.delete()
    }

    private func startSession(with credential: Credential?) {
        self.credential = credential
        isLoaded = true
        sessionDidExpire = false
        shortLivedToken = nil
        generation += 1
        refreshTask = nil
    }

    /// What a request that needs a credential gets when there is none.
    private var noCredentialError: NetworkError {
        sessionDidExpire ? .sessionExpired : .missingCredential
    }

    /// The credential in use, read from the store the first time.
    public func currentCredential() async throws -> Credential? {
        try await loadedCredential()
    }

    // MARK: RequestInterceptor

    public nonisolated func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        guard needsToken(request, context) else { return request }
        do {
            return header.apply(try await accessToken(for: context), to: request)
        } catch is CancellationError {
            throw NetworkError.cancelled
        }
    }

    public nonisolated func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        guard let response, expiredStatusCodes.contains(response.statusCode),
              needsToken(request, context), context[noteKey] == nil,
              response.httpResponse.url.map({ scope.contains(Origin($0)) }) ?? true  // not a redirect target's 401
        else { return .doNotRetry }
        context[noteKey] = true
        do {
            _ = try await credential(replacing: header.token(in: request), for: context)
            return .retry
        } catch is CancellationError {
            return .doNotRetryWithError(NetworkError.cancelled)
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    /// The per-call note that marks a call as already retried for authentication.
    private nonisolated var noteKey: String { "AuthInterceptor.\(id)" }

    /// Whether `request` is one this interceptor authenticates: not made by its own refresh, for an
    /// endpoint that requires authentication, and in scope.
    private nonisolated func needsToken(_ request: URLRequest, _ context: RequestContext) -> Bool {
        guard RefreshScope.current != id, context.endpoint.requiresAuthentication, let url = request.url else { return false }
        return scope.contains(Origin(url))
    }

    // MARK: Credential and refresh

    private func loadedCredential() async throws -> Credential? {
        if !isLoaded {
            let stored = try await store.load()
            if !isLoaded {  // a sign-in or refresh may have finished while the store was read
                credential = stored
                isLoaded = true
            }
        }
        return credential
    }

    /// The token to send now: the current one, or a refreshed one when it is about to expire. When
    /// that proactive refresh fails but the current token has not expired yet, the current one is sent.
    private func accessToken(for context: RequestContext) async throws -> String {
        if let refreshTask { return try await refreshTask.valueUnlessCancelled().accessToken }
        guard let current = try await loadedCredential() else { throw noCredentialError }
        guard current.expires(within: refreshLeeway, of: now()), current.accessToken != shortLivedToken else {
            return current.accessToken
        }
        do {
            return try await credential(replacing: current.accessToken, for: context).accessToken
        } catch let error where Self.isTransient(error) && !current.expires(within: 0, of: now()) {
            return current.accessToken
        }
    }

    /// Whether a refresh error leaves the session intact (not a rejection, sign-out or cancellation).
    private static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case is CancellationError, NetworkError.cancelled, NetworkError.sessionExpired, NetworkError.missingCredential: return false
        default: return true
        }
    }

    /// The credential to use instead of one whose access token is `failedToken`: the current one when
    /// it is newer, else the result of the one shared refresh.
    private func credential(replacing failedToken: String?, for context: RequestContext) async throws -> Credential {
        if let refreshTask { return try await refreshTask.valueUnlessCancelled() }
        guard let current = try await loadedCredential() else { throw noCredentialError }
        if let refreshTask { return try await refreshTask.valueUnlessCancelled() }
        if failedToken != current.accessToken { return current }
        let task = try startRefresh(from: current, for: context)
        return try await task.valueUnlessCancelled()
    }

    /// Starts the one refresh (no suspension between the checks above and here). The provider
    /// monitors of `context`, the call that triggered it, hear about it.
    private func startRefresh(from current: Credential, for context: RequestContext) throws -> Task<Credential, any Error> {
        let startedAt = now()
        refreshDates = refreshDates.filter { startedAt.timeIntervalSince($0) < refreshWindow.interval }
        guard refreshDates.count < refreshWindow.maximumCount else {
            throw NetworkError.excessiveRefresh(count: refreshDates.count, window: refreshWindow.interval)
        }
        refreshDates.append(startedAt)
        broadcaster.send(.refreshStarted)
        context.events.send { $0.tokenRefreshDidStart(context: context) }
        let task = Task { [refresh, id, generation] in
            let result: Result<Credential, any Error>
            do {
                result = .success(try await RefreshScope.$current.withValue(id) { try await refresh(current) })
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success: context.events.send { $0.tokenRefreshDidSucceed(context: context) }
            case .failure(let error): context.events.send { $0.tokenRefreshDidFail(error, context: context) }
            }
            return try await self.finishRefresh(with: result, startedIn: generation)
        }
        refreshTask = task
        return task
    }

    private func finishRefresh(with result: Result<Credential, any Error>, startedIn startGeneration: Int) async throws -> Credential {
        guard startGeneration == generation else {
            // The user signed in or out while this refresh ran: its result belongs to a session that is gone.
            if let credential { return credential }
            throw noCredentialError
        }
        switch result {
        case .success(let renewed):
            credential = renewed  // before any suspension: readers never see the old one again
            refreshTask = nil
            shortLivedToken = renewed.expires(within: refreshLeeway, of: now()) ? renewed.accessToken : nil
            broadcaster.send(.refreshSucceeded)
            do { try await store.save(renewed) } catch { broadcaster.send(.storeFailed(error)) }
            return renewed
        case .failure(let error) where isRejection(error):
            credential = nil
            sessionDidExpire = true
            refreshTask = nil
            broadcaster.send(.sessionExpired)
            do { try await store.delete() } catch { broadcaster.send(.storeFailed(error)) }
            throw NetworkError.sessionExpired
        case .failure(let error):
            refreshTask = nil
            broadcaster.send(.refreshFailed(error))
            throw error
        }
    }
}

/// Marks the task that runs an ``AuthInterceptor``'s refresh, so that its requests are not intercepted.
enum RefreshScope {
    @TaskLocal static var current: UUID?
}
