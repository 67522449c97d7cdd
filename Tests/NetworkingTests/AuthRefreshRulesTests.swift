import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How refreshes fail, are recognised, and are not spent for nothing.
@Suite("AuthInterceptor refresh rules", SuiteTimeLimit.oneMinute)
struct AuthRefreshRulesTests {
    struct AppError: Error {}

    func isRefreshFailed(_ error: any Error, status: Int) -> Bool {
        guard case NetworkError.refreshFailed(let underlying) = error, case NetworkError.invalidStatusCode(status) = underlying else { return false }
        return true
    }

    @Test func everyWaiterOfAFailedProactiveRefreshIsSentWithTheStillValidToken() async throws {
        // GIVEN a token valid for 30 more seconds (inside the 60 s leeway) and an auth server that is down,
        // whose refresh is held open until the other requests have started
        let api = MockAuthServer(accessTokenIsValid: true)
        api.setRefreshAnswer(.unavailable)
        let arrived = Signal()
        let release = Signal()
        api.onRefresh {
            arrived.fire()
            await release.wait()
        }
        let clock = TestClock()
        var credential = MockAuthServer.initialCredential
        credential.expiresAt = clock.now + 30
        let (provider, auth) = api.makeAuthenticatedProvider(credential: credential, refreshLeeway: 60, now: { clock.now })
        // WHEN one request starts the proactive refresh and 200 more come and wait for it
        let first = Task { try await provider.request(api.resource("/items/first"), as: MockAuthServer.Resource.self) }
        await arrived.wait()
        let others = (0..<200).map { id in
            Task { try await provider.request(api.resource("/items/\(id)"), as: MockAuthServer.Resource.self) }
        }
        while await auth.refreshWaiterCount < 201 { await Task.yield() }
        release.fire()
        // THEN every one of them succeeds with the current token, sharing the initiator's fallback
        #expect(try await first.value.token == "access-0")
        for task in others { #expect(try await task.value.token == "access-0") }
        #expect(api.refreshCount == 1)
    }

    @Test func afterAFailedProactiveRefreshTheNextOneWaitsForThePause() async throws {
        // GIVEN a proactive refresh that just failed for a transient reason
        let api = MockAuthServer(accessTokenIsValid: true)
        api.setRefreshAnswer(.unavailable)
        let clock = TestClock()
        var credential = MockAuthServer.initialCredential
        credential.expiresAt = clock.now + 50
        let (provider, _) = api.makeAuthenticatedProvider(credential: credential, refreshLeeway: 60, now: { clock.now })
        _ = try await provider.response(api.resource("/a"))
        #expect(api.refreshCount == 1)
        // WHEN more requests come within the pause, then one after it
        for _ in 0..<5 { _ = try await provider.response(api.resource("/b")) }
        #expect(api.refreshCount == 1)
        clock.advance(by: AuthInterceptor.proactiveRefreshPause + 1)
        api.setRefreshAnswer(.rotate)
        // THEN only the one after the pause refreshes
        #expect(try await provider.request(api.resource("/c"), as: MockAuthServer.Resource.self).token == "access-1")
        #expect(api.refreshCount == 2)
    }

    @Test func aRejectedRefreshIsRecognisedThroughAnErrorMapper() async throws {
        // GIVEN a refresh sent through a provider whose error mapper turns every failure into the app's error,
        // and a refresh endpoint that answers 401 invalid_grant
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let refreshProvider = api.mock.makeProvider(errorMapper: { _ in AppError() })
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: store) { credential, _ in
            let tokens = try await refreshProvider.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = api.mock.makeProvider(interceptor: auth)
        // WHEN two requests need a refresh, one after the other
        for _ in 0..<2 {
            await #expect {
                try await provider.response(api.resource("/items/1"))
            } throws: { error in
                // THEN the session expired, decided from the refresh's HTTP status
                if case NetworkError.sessionExpired = error { return true } else { return false }
            }
        }
        // and the dead refresh token was spent once, and cleared
        #expect(api.refreshCount == 1)
        #expect(try await store.load() == nil)
    }

    @Test func rejectionJudgesTheAppsOwnErrorARejection() async throws {
        // GIVEN an app that treats its own mapped error as a rejection, and an auth server answering 503
        let api = MockAuthServer()
        api.setRefreshAnswer(.unavailable)
        let refreshProvider = api.mock.makeProvider(errorMapper: { _ in AppError() })
        let baseURL = api.baseURL
        let auth = AuthInterceptor(
            baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential),
            rejection: .statusRule(or: { $0 is AppError }),
            refresh: { credential, _ in
                _ = try await refreshProvider.response(MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken))
                return credential
            }
        )
        // WHEN a request needs a refresh, THEN the session expired
        await #expect {
            try await api.mock.makeProvider(interceptor: auth).response(api.resource("/items/1"))
        } throws: { error in
            if case NetworkError.sessionExpired = error { return true } else { return false }
        }
    }

    @Test func aBrokenRefreshEndpointIsNotMistakenForTheRequestsOwnStatus() async throws {
        // GIVEN a refresh endpoint that answers 404 (a wrong path) and then 500
        let api = MockAuthServer()
        api.mock.stub(.post, "/v1/auth/refresh", .status(404), .status(500))
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, _) = api.makeAuthenticatedProvider(store: store)
        // WHEN GET /items/1 needs a refresh
        // THEN it fails with a distinct refresh failure carrying the 404, not as if the item were missing
        await #expect {
            try await provider.response(api.resource("/items/1"))
        } throws: { isRefreshFailed($0, status: 404) }
        await #expect {
            try await provider.response(api.resource("/items/1"))
        } throws: { isRefreshFailed($0, status: 500) }
        // and the credential is kept
        #expect(try await store.load() == MockAuthServer.initialCredential)
    }

    @Test func noRefreshIsStartedWhenTheCapAllowsNoOtherAttempt() async throws {
        // GIVEN a provider allowed one attempt per call, and an expired token
        let api = MockAuthServer()
        let (provider, _) = api.makeAuthenticatedProvider(maximumAttempts: 1)
        // WHEN the request gets 401
        await #expect {
            try await provider.response(api.resource("/items/1"))
        } throws: { error in
            // THEN the call fails with the 401 itself, and no refresh was spent
            if case NetworkError.invalidStatusCode(401) = error { return true } else { return false }
        }
        #expect(api.refreshCount == 0)
    }

    @Test func aTokenRefreshedMomentsAgoIsNotRefreshedForA403() async throws {
        // GIVEN an API where 403 means "token expired", and an endpoint that is forbidden to this user
        let api = MockAuthServer(expiredStatusCode: 403)
        api.mock.stub(.get, "/v1/admin", .status(403))
        let clock = TestClock()
        let (provider, _) = api.makeAuthenticatedProvider(now: { clock.now })
        #expect(try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self).token == "access-1")
        // WHEN the forbidden endpoint is called ten times with the token refreshed moments ago
        for _ in 0..<10 {
            await #expect {
                try await provider.response(api.resource("/admin"))
            } throws: { error in
                // THEN each fails with its 403, without a refresh
                if case NetworkError.invalidStatusCode(403) = error { return true } else { return false }
            }
        }
        #expect(api.refreshCount == 1)
        // and when the token really expires later, the refresh budget is still there
        clock.advance(by: AuthInterceptor.recentRefreshInterval + 1)
        api.expireAccessTokens()
        #expect(try await provider.request(api.resource("/items/2"), as: MockAuthServer.Resource.self).token == "access-2")
        #expect(api.refreshCount == 2)
    }

    @Test func oneRefreshPerLaunchWorksAndItsErrorDescribes() async throws {
        // GIVEN a window of one refresh, ever
        let api = MockAuthServer()
        let clock = TestClock()
        let (provider, _) = api.makeAuthenticatedProvider(refreshWindow: RefreshWindow(interval: .infinity, maximumCount: 1), now: { clock.now })
        _ = try await provider.response(api.resource("/a"))
        clock.advance(by: 1_000_000)
        api.expireAccessTokens()
        // WHEN a second refresh is needed much later
        await #expect {
            try await provider.response(api.resource("/b"))
        } throws: { error in
            // THEN it stops, and the description prints
            guard case NetworkError.excessiveRefresh(count: 1, window: .infinity) = error else { return false }
            return "\(error)" == "The access token was refreshed 1 time since launch; refreshing stopped."
        }
        #expect(api.refreshCount == 1)
    }

    @Test(arguments: [Double.nan, -1, -.infinity, 0, 1e300, .infinity, Double.greatestFiniteMagnitude])
    func retryDelaysNeverTrap(_ seconds: Double) async throws {
        // GIVEN any delay a retrier or a server could ask for
        // WHEN it becomes a sleep, THEN it is between none and a day
        let nanoseconds = NetworkProvider.nanoseconds(forDelay: seconds)
        #expect(nanoseconds <= 86_400 * 1_000_000_000)
        #expect((nanoseconds == 0) == !(seconds > 0))
        // and the default sleep ends at once when cancelled
        let sleeping = Task { try await NetworkProvider.taskSleep(seconds) }
        sleeping.cancel()
        _ = await sleeping.result
    }
}
