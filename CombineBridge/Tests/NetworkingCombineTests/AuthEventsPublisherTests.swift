import Foundation
import Networking
import NetworkingCombine
import NetworkingTestSupport
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

/// `AuthInterceptor.eventsPublisher()`: the session's events, from subscription on.
@Suite("Combine: auth events publisher", SuiteTimeLimit.oneMinute)
struct AuthEventsPublisherTests {
    @Test func aRejectedRefreshIsPublishedAsRefreshStartedThenSessionExpired() async throws {
        // GIVEN a subscriber to the interceptor's events, and a refresh endpoint that rejects the refresh token
        let server = MockAuthServer()
        server.setRefreshAnswer(.reject)
        let (provider, auth) = server.makeAuthenticatedProvider(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let probe = Probe<AuthEvent>()
        auth.eventsPublisher().setFailureType(to: (any Error).self).subscribe(probe)
        // WHEN a request fails with the expired token
        await #expect(throws: NetworkError.self) { _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self) }
        // THEN the subscriber heard the refresh start, then the session expire
        #expect(await probe.values(count: 2).map { "\($0)" } == ["refreshStarted", "sessionExpired"])
        probe.cancel()
    }

    @Test func aSubscriberAskingForOneEventGetsOne() async throws {
        let server = MockAuthServer()
        server.setRefreshAnswer(.reject)
        let (provider, auth) = server.makeAuthenticatedProvider(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let probe = Probe<AuthEvent>(initialDemand: .max(1))
        auth.eventsPublisher().setFailureType(to: (any Error).self).subscribe(probe)
        await #expect(throws: NetworkError.self) { _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self) }
        #expect(await probe.values(count: 1).map { "\($0)" } == ["refreshStarted"])
        // the second event waits for demand
        #expect(probe.values.count == 1)
        probe.request(1)
        #expect(await probe.values(count: 2).map { "\($0)" } == ["refreshStarted", "sessionExpired"])
        probe.cancel()
    }

    @Test func thePublisherFinishesWhenTheInterceptorIsReleased() async throws {
        // GIVEN a subscriber to an interceptor that only the publisher holds
        let probe = Probe<AuthEvent>()
        do {
            let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com/")!) { credential, _ in credential }
            auth.eventsPublisher().setFailureType(to: (any Error).self).subscribe(probe)
        }
        // WHEN the publisher and the interceptor are gone, THEN the subscription finishes: it did not hold the interceptor
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.isEmpty)
    }
}
