import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sessions that change while a refresh runs, short-lived tokens, and 401s that are not ours.
@Suite("AuthInterceptor sessions", SuiteTimeLimit.oneMinute)
struct AuthSessionTests {
    /// A server whose refresh is held open until the test releases it.
    func heldRefresh(_ api: MockAuthServer) -> (arrived: Signal, release: Signal) {
        let arrived = Signal()
        let release = Signal()
        api.onRefresh {
            arrived.fire()
            await release.wait()
        }
        return (arrived, release)
    }

    @Test func signOutDuringARefreshStaysSignedOut() async throws {
        // GIVEN a refresh in flight
        let api = MockAuthServer()
        let (arrived, release) = heldRefresh(api)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, auth) = api.makeAuthenticatedProvider(store: store)
        let call = Task { try await provider.response(api.resource("/me")) }
        await arrived.wait()
        // WHEN the user signs out, then the refresh answers
        try await auth.signOut()
        release.fire()
        // THEN the waiting call fails as signed out, and the refreshed tokens are not resurrected
        await #expect {
            try await call.value
        } throws: { error in
            if case NetworkError.missingCredential = error { return true } else { return false }
        }
        #expect(try await auth.currentCredential() == nil)
        #expect(try await store.load() == nil)
    }

    @Test func signInDuringARejectedRefreshKeepsTheNewSession() async throws {
        // GIVEN a refresh in flight that will be rejected
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let (arrived, release) = heldRefresh(api)
        let (provider, auth) = api.makeAuthenticatedProvider()
        let events = auth.events()
        let call = Task { try await provider.response(api.resource("/me")) }
        await arrived.wait()
        // WHEN the user signs in again before it answers
        let fresh = try await provider.request(api.signIn(), as: MockAuthServer.Tokens.self)
        try await auth.signIn(with: Credential(accessToken: fresh.accessToken, refreshToken: fresh.refreshToken))
        release.fire()
        // THEN the waiting call is resent with the new session and succeeds, and the session stays
        #expect(try await call.value.statusCode == 200)
        #expect(try await auth.currentCredential()?.accessToken == fresh.accessToken)
        // and no session-expired event was sent (the marker is the next refresh's start)
        api.setRefreshAnswer(.rotate)
        api.expireAccessTokens()
        _ = try await provider.response(api.resource("/me"))
        var seen: [String] = []
        for await event in events {
            seen.append("\(event)")
            if case .refreshSucceeded = event { break }
        }
        #expect(seen == ["refreshStarted", "refreshStarted", "refreshSucceeded"])
    }

    @Test func requestsInFlightWhenTheRefreshIsRejectedGetSessionExpired() async throws {
        // GIVEN a session whose refresh token was just rejected
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let (provider, auth) = api.makeAuthenticatedProvider()
        await #expect(throws: NetworkError.self) { try await provider.response(api.resource("/a")) }
        // WHEN a request that was sent with the old token comes back with 401, and a new one is made
        var old = URLRequest(url: URL(string: "https://api.example.com/v1/b")!)
        old.setValue("Bearer access-0", forHTTPHeaderField: "Authorization")
        let http = HTTPURLResponse(url: old.url!, statusCode: 401, httpVersion: nil, headerFields: nil)!
        let late = await auth.retry(
            old, dueTo: NetworkError.invalidStatusCode(401), response: Response(data: Data(), httpResponse: http, request: old),
            context: RequestContext(endpoint: api.resource("/b")))
        // THEN both say the session expired (not "no credential")
        guard case .doNotRetryWithError(NetworkError.sessionExpired) = late else {
            Issue.record("got \(late)")
            return
        }
        await #expect {
            try await provider.response(api.resource("/c"))
        } throws: { error in
            if case NetworkError.sessionExpired = error { return true } else { return false }
        }
        // and after an explicit sign-out it is "no credential" again
        try await auth.signOut()
        await #expect {
            try await provider.response(api.resource("/d"))
        } throws: { error in
            if case NetworkError.missingCredential = error { return true } else { return false }
        }
    }

    @Test func shortLivedTokensAreNotRefreshedOnEveryRequest() async throws {
        // GIVEN tokens that live 30 s and a 60 s leeway (a misconfiguration the interceptor survives)
        let api = MockAuthServer(accessTokenIsValid: true, tokenLifetime: 30)
        let clock = TestClock()
        var credential = MockAuthServer.initialCredential
        credential.expiresAt = clock.now + 30
        let (provider, auth) = api.makeAuthenticatedProvider(credential: credential, refreshLeeway: 60, now: { clock.now })
        // WHEN eight requests are made in a row
        for index in 0..<8 {
            _ = try await provider.request(api.resource("/items/\(index)"), as: MockAuthServer.Resource.self)
        }
        // THEN the first refreshed proactively, and the short-lived result was not refreshed again
        #expect(api.refreshCount == 1)
        #expect(try await auth.currentCredential()?.expiresAt == clock.now + 30)
    }

    @Test func proactiveRefreshThatFailsStillSendsAValidToken() async throws {
        // GIVEN a token valid for 30 more seconds, inside the leeway, and an auth server that is down
        let api = MockAuthServer(accessTokenIsValid: true)
        api.setRefreshAnswer(.unavailable)
        let clock = TestClock()
        var credential = MockAuthServer.initialCredential
        credential.expiresAt = clock.now + 30
        let (provider, _) = api.makeAuthenticatedProvider(credential: credential, refreshLeeway: 60, now: { clock.now })
        // WHEN a request is made
        let resource = try await provider.request(api.resource("/me"), as: MockAuthServer.Resource.self)
        // THEN the refresh was tried, failed, and the still-valid token was sent
        #expect(api.refreshCount == 1)
        #expect(resource.token == "access-0")
    }

    @Test func a401FromARedirectTargetDoesNotRefresh() async throws {
        // GIVEN an API request that was redirected to storage on another host, which answered 401
        let api = MockAuthServer(accessTokenIsValid: true)
        let (_, auth) = api.makeAuthenticatedProvider()
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/files/1")!)
        request.setValue("Bearer access-0", forHTTPHeaderField: "Authorization")
        let http = HTTPURLResponse(url: URL(string: "https://storage.example.net/bucket/1")!, statusCode: 401, httpVersion: nil, headerFields: nil)!
        // WHEN the interceptor is asked to retry
        let result = await auth.retry(
            request, dueTo: NetworkError.invalidStatusCode(401), response: Response(data: Data(), httpResponse: http, request: request),
            context: RequestContext(endpoint: api.resource("/files/1")))
        // THEN it does not, and nothing was refreshed
        guard case .doNotRetry = result else {
            Issue.record("got \(result)")
            return
        }
        #expect(api.refreshCount == 0)
    }

    @Test func dumpingACredentialHidesTheTokens() {
        var text = ""
        dump(Credential(accessToken: "secret-a", refreshToken: "secret-r"), to: &text)
        #expect(!text.contains("secret") && text.contains("<redacted>"))
    }

    @Test func aStubThatThrowsIsABadResponseNotACancellation() async {
        struct Broken: Error {}
        let server = MockServer()
        server.stub(.get, "/v1/users/1") { _ in throw Broken() }
        await #expect {
            try await server.makeProvider().response(TestEndpoint())
        } throws: { error in
            guard case NetworkError.transportFailed(let urlError) = error else { return false }
            return urlError.code == .badServerResponse
        }
    }
}
