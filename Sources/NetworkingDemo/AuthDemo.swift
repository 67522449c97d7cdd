import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The token story: sign in, call an API, the token expires under a storm of 50 requests (one
/// refresh), then the refresh token is revoked and the app is told once to sign in again; last, a
/// JWT whose `exp` has passed is refreshed before 1,000 requests are sent (no 401 at all).
/// Tokens are never printed.
enum AuthDemo {
    typealias Resource = MockAuthServer.Resource

    static func run() async throws {
        let api = MockAuthServer()
        let (provider, auth) = api.makeAuthenticatedProvider(credential: nil)
        let sessionEvents = SessionListener(auth.events())

        print("== Sign in and call the API")
        let tokens = try await provider.request(api.signIn(), as: MockAuthServer.Tokens.self)
        try await auth.signIn(with: Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken))
        print("signed in     credential stored; requests to \(Origin(api.baseURL)) now carry it")
        let me = try await provider.response(api.resource("/me"))
        print(
            "called        GET /v1/me → \(me.statusCode), sent with \(me.request.value(forHTTPHeaderField: "Authorization") != nil ? "an" : "no") Authorization header"
        )
        print()

        print("== The access token expires; 50 requests fire at once")
        api.expireAccessTokens()
        let refreshesBefore = api.refreshCount
        let results = await storm(50, provider: provider, api: api)
        let succeeded = results.filter { $0 }.count
        print("storm: requests=\(results.count) succeeded=\(succeeded) failed=\(results.count - succeeded) refreshes=\(api.refreshCount - refreshesBefore)")
        print()

        print("== The refresh token is revoked")
        api.setRefreshAnswer(.reject)
        api.expireAccessTokens()
        let afterRevoke = await storm(10, provider: provider, api: api, expecting: .sessionExpired)
        print("requests      \(afterRevoke.count) in flight, \(afterRevoke.filter { $0 }.count) failed with NetworkError.sessionExpired")
        print("stored        \(try await auth.currentCredential() == nil ? "nothing (cleared)" : "a credential")")

        // The app shows its sign-in screen; the user signs in again and the next expiry refreshes as usual.
        api.setRefreshAnswer(.rotate)
        let again = try await provider.request(api.signIn(), as: MockAuthServer.Tokens.self)
        try await auth.signIn(with: Credential(accessToken: again.accessToken, refreshToken: again.refreshToken))
        api.expireAccessTokens()
        _ = try await provider.request(api.resource("/me"), as: Resource.self)
        let told = await sessionEvents.sessionExpiredCount(untilRefreshSucceeded: 2)
        print("app told      \(told == 1 ? "once" : "\(told) times"): \"your session has expired, please sign in again\"")
        print("signed in     again; the next expiry refreshed as usual")
        print()

        try await jwtStorm()
    }

    /// A credential that says nothing of its expiry, but whose access token is a JWT with an `exp`
    /// claim that has passed: the interceptor refreshes before sending, so not one request gets a 401.
    private static func jwtStorm() async throws {
        print("== A JWT access token expired by the clock; 1,000 requests fire at once")
        let api = MockAuthServer(issuesJWTs: true)
        let expired = Credential(accessToken: MockAuthServer.jwt(subject: "access-0", expiresAt: Date() - 60), refreshToken: "refresh-0")
        let (provider, _) = api.makeAuthenticatedProvider(credential: expired)
        let results = await storm(1_000, provider: provider, api: api)
        let succeeded = results.filter { $0 }.count
        print("jwt-storm: requests=\(results.count) succeeded=\(succeeded) 401s=\(api.expiredResponseCount) refreshes=\(api.refreshCount)")
        print()
    }

    /// Fires `count` requests at once; each result says whether it ended as expected.
    private static func storm(
        _ count: Int,
        provider: NetworkProvider,
        api: MockAuthServer,
        expecting expected: NetworkError? = nil
    ) async -> [Bool] {
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        _ = try await provider.request(api.resource("/items/\(index)"), as: Resource.self)
                        return expected == nil
                    } catch NetworkError.sessionExpired {
                        if case .sessionExpired? = expected { return true }
                        return false
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }
}

/// The app's listener for auth events, as a real app would keep one to show its sign-in screen.
actor SessionListener {
    private var sessionExpired = 0
    private var refreshesSucceeded = 0
    private var waiters: [(Int, CheckedContinuation<Int, Never>)] = []

    init(_ events: AsyncStream<AuthEvent>) {
        Task { [weak self] in
            for await event in events {
                await self?.record(event)
            }
        }
    }

    private func record(_ event: AuthEvent) {
        switch event {
        case .sessionExpired: sessionExpired += 1
        case .refreshSucceeded: refreshesSucceeded += 1
        default: break
        }
        let ready = waiters.filter { $0.0 <= refreshesSucceeded }
        waiters.removeAll { $0.0 <= refreshesSucceeded }
        for (_, continuation) in ready { continuation.resume(returning: sessionExpired) }
    }

    /// How many times the session expired, counted once `refreshes` refreshes have succeeded: events
    /// arrive in order, so everything before that marker has been seen.
    func sessionExpiredCount(untilRefreshSucceeded refreshes: Int) async -> Int {
        if refreshesSucceeded >= refreshes { return sessionExpired }
        return await withCheckedContinuation { waiters.append((refreshes, $0)) }
    }
}
