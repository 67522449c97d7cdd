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

/// `cachedThenFreshPublisher`: the stored value, then the server's (RFC 9111 §4.3: asked conditionally).
@Suite("Combine: cached-then-fresh publisher", SuiteTimeLimit.oneMinute)
struct CachedThenFreshPublisherTests {
    /// A provider with a memory cache, and a user stored in it as version 1, which the server then changed
    /// to version 2 (or not, with `changed` false).
    private func providerWithStoredUser(changed: Bool = true, delay: TimeInterval = 0) async throws -> (NetworkProvider, MockServer) {
        let server = MockServer()
        let resource = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/users/1") { request in resource.response(to: request).delayed(by: request.header("If-None-Match") == nil ? 0 : delay) }
        let provider = server.makeProvider(cache: MemoryResponseCache())
        _ = try await provider.request(API(), as: User.self)
        if changed { resource.update(body: MockResponse.json(User(id: 1, name: "Kim Lee")).body, etag: "\"v2\"") }
        return (provider, server)
    }

    @Test func itEmitsTheStoredValueThenTheServersThenFinishes() async throws {
        let (provider, _) = try await providerWithStoredUser()
        let probe = Probe<CachedOrFresh<User>>()
        provider.cachedThenFreshPublisher(API(), as: User.self).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.map(\.value.name) == ["Kim", "Kim Lee"])
        #expect(probe.values.map(\.isFromCache) == [true, false])
    }

    @Test func aServerThatConfirmsTheStoredValueLeavesItTheOnlyValueRFC9111_4_3_4() async throws {
        let (provider, server) = try await providerWithStoredUser(changed: false)
        let probe = Probe<CachedOrFresh<User>>()
        provider.cachedThenFreshPublisher(API(), as: User.self).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.map(\.value.name) == ["Kim"])
        #expect(server.requests.last?.header("If-None-Match") == "\"v1\"")
    }

    @Test func aSubscriberAskingForOneValueGetsTheStoredOneOnly() async throws {
        // GIVEN a stored user, and a subscriber that asks for one value
        let (provider, _) = try await providerWithStoredUser()
        let probe = Probe<CachedOrFresh<User>>(initialDemand: .max(1))
        provider.cachedThenFreshPublisher(API(), as: User.self).subscribe(probe)
        // THEN it gets the stored value and no more, and no end
        #expect(await probe.values(count: 1).map(\.isFromCache) == [true])
        #expect(probe.values.count == 1 && probe.completed == nil)
        // WHEN it asks for one more, THEN the server's value comes, and the end
        probe.request(1)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.map(\.value.name) == ["Kim", "Kim Lee"])
    }

    @Test func cancellingAfterTheStoredValueCancelsTheRequestToTheServer() async throws {
        // GIVEN a stored user whose revalidation would take 30 s
        let (provider, server) = try await providerWithStoredUser(delay: 30)
        let probe = Probe<CachedOrFresh<User>>()
        provider.cachedThenFreshPublisher(API(), as: User.self).subscribe(probe)
        #expect(await probe.values(count: 1).map(\.isFromCache) == [true])
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")   // the first call's
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")   // the revalidation
        // WHEN the subscription is cancelled
        probe.cancel()
        // THEN the revalidation is stopped at the server
        #expect(await server.waitForInterruptions(1))
        #expect(probe.completed == nil)
    }

    @Test func aNetworkErrorAfterTheStoredValueFailsThePublisher() async throws {
        let server = MockServer()
        let resource = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        let failing = Flag()
        server.stub(.get, "/v1/users/1") { request in failing.isSet ? .status(503) : resource.response(to: request) }
        let provider = server.makeProvider(cache: MemoryResponseCache())
        _ = try await provider.request(API(), as: User.self)
        failing.set()
        let probe = Probe<CachedOrFresh<User>>()
        provider.cachedThenFreshPublisher(API(), as: User.self).subscribe(probe)
        let error = await probe.failure()
        #expect(error != nil)
        #expect(probe.values.map(\.isFromCache) == [true])
    }
}
