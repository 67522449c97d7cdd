import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("AuthInterceptor", SuiteTimeLimit.threeMinutes)
struct AuthInterceptorTests {
    @Test func attachesTheBearerTokenToInScopeRequests() async throws {
        let server = MockAuthServer(accessTokenIsValid: true)
        let (provider, _) = server.makeAuthenticatedProvider()
        let item = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        #expect(item.path == "/v1/items/1" && item.token == "access-0")
        #expect(server.mock.requests.first?.header("Authorization") == "Bearer access-0")
        #expect(server.refreshCount == 0)
    }

    @Test func thousandConcurrentRequestsWithAnExpiredTokenShareOneRefresh() async throws {
        // GIVEN a server on which the stored access token has expired
        let server = MockAuthServer()
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, auth) = server.makeAuthenticatedProvider(store: store)
        // WHEN 1,000 requests run at once
        let items = try await withThrowingTaskGroup(of: MockAuthServer.Resource.self) { group in
            for id in 0..<1_000 {
                group.addTask { try await provider.request(server.resource("/items/\(id)"), as: MockAuthServer.Resource.self) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // THEN the refresh endpoint was called once, all succeeded with the new token, none sent more than twice
        #expect(server.refreshCount == 1)
        #expect(items.count == 1_000)
        #expect(Set(items.map(\.path)) == Set((0..<1_000).map { "/v1/items/\($0)" }))
        #expect(items.allSatisfy { $0.token == "access-1" })
        let sends = Dictionary(grouping: server.mock.requests.filter { $0.path.hasPrefix("/v1/items/") }, by: \.path)
        #expect(sends.count == 1_000)
        #expect(sends.values.allSatisfy { $0.count <= 2 })
        // and the rotated pair was stored together
        #expect(try await store.load() == Credential(accessToken: "access-1", refreshToken: "refresh-1"))
        #expect(try await auth.currentCredential() == Credential(accessToken: "access-1", refreshToken: "refresh-1"))
    }

    @Test func refreshRequestItselfIsNeverIntercepted() async throws {
        // GIVEN the refresh endpoint is spelled like any other (requiresAuthentication: true, same host)
        let server = MockAuthServer()
        let (provider, _) = server.makeAuthenticatedProvider()
        _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        // THEN it carried no access token
        let refresh = try #require(server.mock.requests(.post, "/v1/auth/refresh").first)
        #expect(refresh.header("Authorization") == nil)
    }

    @Test func requestThatFailedWithAReplacedTokenIsResentWithoutRefreshing() async throws {
        // GIVEN an interceptor whose credential is already newer than the token a request failed with
        let server = MockAuthServer()
        let (_, auth) = server.makeAuthenticatedProvider(credential: Credential(accessToken: "access-5", refreshToken: "refresh-5"))
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/items/1")!)
        request.setValue("Bearer access-4", forHTTPHeaderField: "Authorization")
        let response = Response(
            data: Data(), httpResponse: HTTPURLResponse(url: request.url!, statusCode: 401, httpVersion: nil, headerFields: nil)!, request: request)
        // WHEN it asks whether to retry
        let result = await auth.retry(
            request, dueTo: NetworkError.invalidStatusCode(401), response: response,
            context: RequestContext(endpoint: server.resource("/items/1")))
        // THEN it retries at once and nothing was refreshed
        guard case .retry = result else {
            Issue.record("expected retry, got \(result)")
            return
        }
        #expect(server.refreshCount == 0)
        #expect(server.mock.requests.isEmpty)
    }

    @Test func rejectedRefreshExpiresTheSessionOnceWithoutLooping() async throws {
        // GIVEN a refresh endpoint that rejects the refresh token with 401
        let server = MockAuthServer()
        server.setRefreshAnswer(.reject)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, auth) = server.makeAuthenticatedProvider(store: store)
        let events = auth.events()
        // WHEN 50 requests fail at once
        let errors = await withTaskGroup(of: (any Error)?.self) { group in
            for id in 0..<50 {
                group.addTask {
                    do {
                        _ = try await provider.request(server.resource("/items/\(id)"), as: MockAuthServer.Resource.self)
                        return nil
                    } catch { return error }
                }
            }
            return await group.reduce(into: [(any Error)?]()) { $0.append($1) }
        }
        // THEN one refresh, the store is empty, every request got the same clear error
        #expect(server.refreshCount == 1)
        #expect(try await store.load() == nil)
        #expect(errors.count == 50)
        #expect(errors.allSatisfy { if case NetworkError.sessionExpired? = $0 { return true } else { return false } })
        // and the app was told once: sign in again and refresh once more to get a marker event after it
        try await auth.signIn(with: Credential(accessToken: "stale", refreshToken: "refresh-0"))
        server.setRefreshAnswer(.rotate)
        _ = try await provider.request(server.resource("/items/99"), as: MockAuthServer.Resource.self)
        var seen: [String] = []
        for await event in events {
            seen.append("\(event)")
            if case .refreshSucceeded = event { break }
        }
        #expect(seen == ["refreshStarted", "sessionExpired", "refreshStarted", "refreshSucceeded"])
        // and a request after sign-out fails fast without sending
        try await auth.signOut()
        let sent = server.mock.requests.count
        await #expect {
            _ = try await provider.request(server.resource("/items/100"), as: MockAuthServer.Resource.self)
        } throws: { error in
            if case NetworkError.missingCredential = error { return true } else { return false }
        }
        #expect(server.mock.requests.count == sent)
    }

    @Test func transientRefreshFailureKeepsTheTokens() async throws {
        // GIVEN a refresh endpoint that is down
        let server = MockAuthServer()
        server.setRefreshAnswer(.unavailable)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, auth) = server.makeAuthenticatedProvider(store: store)
        // WHEN a request needs a refresh
        await #expect {
            _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        } throws: { error in
            // THEN it fails with a refresh failure that carries the refresh's own error
            guard case NetworkError.refreshFailed(let underlying) = error, case NetworkError.invalidStatusCode(503) = underlying else { return false }
            return true
        }
        // and the tokens are kept
        #expect(try await store.load() == MockAuthServer.initialCredential)
        #expect(try await auth.currentCredential() == MockAuthServer.initialCredential)
        // WHEN the endpoint recovers, the next request refreshes and succeeds
        server.setRefreshAnswer(.rotate)
        #expect(try await provider.request(server.resource("/items/2"), as: MockAuthServer.Resource.self).token == "access-1")
        #expect(server.refreshCount == 2)
    }

    @Test func excessiveRefreshesStopAtTheWindowLimit() async throws {
        // GIVEN a server that forgets every token right after issuing it (a server bug)
        let server = MockAuthServer()
        let clock = TestClock()
        let (provider, _) = server.makeAuthenticatedProvider(refreshWindow: RefreshWindow(interval: 60, maximumCount: 3), now: { clock.now })
        // WHEN three requests, 11 s apart, each find their token expired
        for id in 0..<3 {
            server.expireAccessTokens()
            #expect(try await provider.request(server.resource("/items/\(id)"), as: MockAuthServer.Resource.self).token == "access-\(id + 1)")
            clock.advance(by: AuthInterceptor.recentRefreshInterval + 1)
        }
        // THEN each refreshed; the fourth inside the window stops with a clear error
        server.expireAccessTokens()
        #expect(server.refreshCount == 3)
        await #expect {
            _ = try await provider.request(server.resource("/items/3"), as: MockAuthServer.Resource.self)
        } throws: { error in
            guard case NetworkError.excessiveRefresh(count: 3, window: 60) = error else { return false }
            return true
        }
        #expect(server.refreshCount == 3)
        // and once the window has passed, refreshing works again
        clock.advance(by: 61)
        #expect(try await provider.request(server.resource("/items/4"), as: MockAuthServer.Resource.self).token == "access-4")
    }

    @Test func proactiveRefreshBeforeTheTokenExpires() async throws {
        // GIVEN a credential that expires in 120 s, a 60 s leeway, and a clock the test controls
        let server = MockAuthServer(accessTokenIsValid: true)
        let clock = TestClock()
        var credential = MockAuthServer.initialCredential
        credential.expiresAt = clock.now + 120
        let (provider, _) = server.makeAuthenticatedProvider(credential: credential, refreshLeeway: 60, now: { clock.now })
        // WHEN a request is sent well before expiry, no refresh happens
        #expect(try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self).token == "access-0")
        #expect(server.refreshCount == 0)
        // WHEN the clock is inside the leeway
        clock.advance(by: 61)
        let item = try await provider.request(server.resource("/items/2"), as: MockAuthServer.Resource.self)
        // THEN the token was refreshed before sending: one refresh, and the request was sent once, with the new token
        #expect(item.token == "access-1")
        #expect(server.refreshCount == 1)
        #expect(server.mock.requests(.get, "/v1/items/2").map { $0.header("Authorization") } == ["Bearer access-1"])
    }

    @Test func tokenStaysInScope() async throws {
        // GIVEN a valid token scoped to https://api.example.com
        let server = MockAuthServer(accessTokenIsValid: true)
        let (provider, _) = server.makeAuthenticatedProvider()
        // WHEN requests go to another host, another port, another scheme, and the API itself
        for base in ["https://cdn.example.net/", "https://api.example.com:8443/", "http://api.example.com/", "https://api.example.com/"] {
            _ = try await provider.response(TestEndpoint(baseURL: URL(string: base)!, path: "/public"))
        }
        // THEN only the API's own origin got the token
        #expect(server.mock.requests.map { $0.header("Authorization") } == [nil, nil, nil, "Bearer access-0"])
    }

    @Test func endpointsThatNeedNoAuthenticationCarryNoTokenAndNeverRefresh() async throws {
        let server = MockAuthServer()
        server.mock.stub(.post, "/v1/auth/sign-in", .status(401))
        let (provider, _) = server.makeAuthenticatedProvider()
        await #expect(throws: NetworkError.self) {
            try await provider.response(TestEndpoint(baseURL: server.baseURL, path: "/auth/sign-in", method: .post, requiresAuthentication: false))
        }
        #expect(server.mock.requests.first?.header("Authorization") == nil)
        #expect(server.refreshCount == 0)
    }

    @Test func noCredentialFailsFastWithoutSending() async throws {
        let server = MockAuthServer()
        let (provider, _) = server.makeAuthenticatedProvider(credential: nil)
        await #expect {
            _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        } throws: { error in
            if case NetworkError.missingCredential = error { return true } else { return false }
        }
        #expect(server.mock.requests.isEmpty)
    }

    @Test func customHeaderRawTokenAnd419() async throws {
        // GIVEN an API that wants `accessToken: <token>` and says 419 when it expired
        let server = MockAuthServer(header: AuthorizationHeader(name: "accessToken"), expiredStatusCode: 419)
        let (provider, _) = server.makeAuthenticatedProvider()
        // WHEN a request is sent with the expired token
        let item = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        // THEN the 419 refreshed, and the raw token went in the custom header
        #expect(item.token == "access-1")
        #expect(server.refreshCount == 1)
        #expect(server.mock.requests(.get, "/v1/items/1").map { $0.header("accessToken") } == ["access-0", "access-1"])
        #expect(server.mock.requests.allSatisfy { $0.header("Authorization") == nil })
    }

    @Test func retriedForAuthenticationAtMostOnce() async throws {
        // GIVEN a server whose freshly issued tokens are rejected too
        let server = MockAuthServer()
        server.mock.stub(.get, "/v1/items/1", .status(401))
        let (provider, _) = server.makeAuthenticatedProvider()
        // WHEN the request collects 401s
        await #expect(throws: NetworkError.self) { _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self) }
        // THEN one refresh and exactly two sends
        #expect(server.refreshCount == 1)
        #expect(server.mock.requests(.get, "/v1/items/1").count == 2)
    }

    @Test func cancellingWaitersDoesNotCancelTheSharedRefresh() async throws {
        // GIVEN a refresh that is held open, and 20 requests waiting on it
        let server = MockAuthServer()
        let gate = Signal()
        let refreshArrived = Signal()
        server.onRefresh {
            refreshArrived.fire()
            await gate.wait()
        }
        let (provider, _) = server.makeAuthenticatedProvider()
        let tasks = (0..<20).map { id in Task { try await provider.request(server.resource("/items/\(id)"), as: MockAuthServer.Resource.self) } }
        await refreshArrived.wait()
        // WHEN half of them are cancelled while the refresh is in flight
        for task in tasks[..<10] { task.cancel() }
        // THEN they end with a cancellation error before the refresh answers (else this test times out)
        for task in tasks[..<10] {
            await #expect {
                _ = try await task.value
            } throws: { error in
                if case NetworkError.cancelled = error { return true } else { return false }
            }
        }
        // and when the refresh answers, the others succeed on that one refresh
        gate.fire()
        for task in tasks[10...] {
            #expect(try await task.value.token == "access-1")
        }
        #expect(server.refreshCount == 1)
    }

    @Test func credentialDescriptionHidesTokens() {
        let text = "\(Credential(accessToken: "secret-a", refreshToken: "secret-r"))"
        #expect(!text.contains("secret"))
    }
}
