import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ordinary call takes the token the interceptor published, without a turn of its actor (see
/// `PublishedToken`): it must get exactly what the actor would have given it, whatever happened to the session
/// since earlier calls took it.
@Suite("AuthInterceptor: the published token", SuiteTimeLimit.oneMinute)
struct AuthPublishedTokenTests {
    @Test func aCallMadeWhileARefreshRunsWaitsForItInsteadOfSendingThePublishedToken() async throws {
        // GIVEN calls took the published token, then a 401 started a refresh that the server holds open
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, auth) = try await api.warmedUp()
        let arrived = Signal()
        let release = Signal()
        api.onRefresh {
            arrived.fire()
            await release.wait()
        }
        api.expireAccessTokens()
        let first = Task { try await provider.request(api.resource("/first"), as: MockAuthServer.Resource.self) }
        await arrived.wait()
        // WHEN another call is made while the refresh runs
        let second = Task { try await provider.request(api.resource("/second"), as: MockAuthServer.Resource.self) }
        while await auth.refreshWaiterCount == 0, !api.mock.requests.contains(where: { $0.path.hasSuffix("/second") }) {
            await Task.yield()   // until it waits for the refresh, or (wrongly) was sent with the old token
        }
        release.fire()
        // THEN it waited: it was sent once, with the refreshed token, and only the first call met a 401
        #expect(try await first.value.token == "access-1")
        #expect(try await second.value.token == "access-1")
        #expect(api.expiredResponseCount == 1)
        #expect(api.refreshCount == 1)
        #expect(api.mock.requests.filter { $0.path.hasSuffix("/second") }.count == 1)
    }

    @Test func aCallAfterSignOutFailsWithoutACredential() async throws {
        // GIVEN calls took the published token
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, auth) = try await api.warmedUp()
        // WHEN the user signs out
        try await auth.signOut()
        // THEN the next call is not sent: there is no credential
        await #expect {
            try await provider.response(api.resource("/after"))
        } throws: { error in
            if case NetworkError.missingCredential = error { return true } else { return false }
        }
        #expect(!api.mock.requests.contains { $0.path.hasSuffix("/after") })
    }

    @Test func aCallAfterSignInSendsTheNewToken() async throws {
        // GIVEN calls took the published token
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, auth) = try await api.warmedUp()
        // WHEN another account signs in
        let tokens = try await provider.request(api.signIn(), as: MockAuthServer.Tokens.self)
        try await auth.signIn(with: Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, account: "other"))
        // THEN the next call carries the new token at once
        #expect(try await provider.request(api.resource("/after"), as: MockAuthServer.Resource.self).token == tokens.accessToken)
    }

    @Test func aTokenWhoseKnownExpiryEntersTheLeewayIsRefreshedBeforeSending() async throws {
        // GIVEN calls took a published token that expires in an hour (refresh leeway: 60 s)
        let api = MockAuthServer(accessTokenIsValid: true)
        let clock = TestClock()
        let credential = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(3_600))
        let (provider, _) = try await api.warmedUp(now: { clock.now }, credential: credential)
        // WHEN the clock comes within the leeway of that expiry
        clock.advance(by: 3_600 - 30)
        // THEN the next call is refreshed first and sent with the new token, without a 401
        #expect(try await provider.request(api.resource("/later"), as: MockAuthServer.Resource.self).token == "access-1")
        #expect(api.refreshCount == 1)
        #expect(api.expiredResponseCount == 0)
    }
}

extension MockAuthServer {
    /// A provider whose interceptor read its store and published `credential`'s token (one call made with
    /// it): the published-token tests and the storm review start from it.
    func warmedUp(now: @escaping @Sendable () -> Date = { Date() }, credential: Credential = MockAuthServer.initialCredential)
        async throws -> (NetworkProvider, AuthInterceptor)
    {
        let (provider, auth) = makeAuthenticatedProvider(credential: credential, now: now)
        let warm = try await provider.request(resource("/warm"), as: MockAuthServer.Resource.self)
        #expect(warm.token == credential.accessToken)
        return (provider, auth)
    }
}
