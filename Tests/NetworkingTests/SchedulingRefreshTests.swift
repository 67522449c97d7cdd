import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 33, part 2: a token refresh is never stuck behind the calls waiting for it. No slot is held
/// while a call waits for a refresh (in adapt or in retry), and the refresh's own request never queues.
@Suite("Scheduling: a token refresh under the limits, no deadlock", SuiteTimeLimit.threeMinutes)
struct SchedulingRefreshTests {
    /// A provider of `api` under `scheduling`, with its interceptor; the refresh goes through it.
    func makeProvider(_ api: MockAuthServer, _ scheduling: Scheduling, credential: Credential = MockAuthServer.initialCredential) -> NetworkProvider {
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(credential))
        return NetworkProvider(
            scheduling: scheduling, configuration: api.mock.makeConfiguration(basedOn: .ephemeral),
            interceptor: Interceptor(adapters: [auth], retriers: [auth]))
    }

    @Test("a storm of 300 calls with an expired token under 1 or 2 slots per host: one refresh, every call answered", arguments: [1, 2])
    func expiredStorm(limit: Int) async throws {
        let api = MockAuthServer()
        let provider = makeProvider(api, Scheduling(maximumCallsPerHost: limit))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<300 { group.addTask { try await provider.response(api.resource("/items/\(index)")).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 300 && statuses.allSatisfy { $0 == 200 })
        #expect(api.refreshCount == 1)
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
    }

    /// How the provider's interceptor is made in ``queuedCallsSendTheTokenOfTheirSendingTime(_:)``.
    enum Chain: CaseIterable, Sendable {
        case authInterceptor, composite, withAppAdapter
    }

    @Test(
        "calls that waited in the queue while the token was refreshed are sent with the new token (RFC 9110 §15.5.2), unless an app's adapter ran after",
        arguments: Chain.allCases)
    func queuedCallsSendTheTokenOfTheirSendingTime(_ chain: Chain) async throws {
        // GIVEN an expired token, one slot per host, and 100 calls that took their token before they queued
        let api = MockAuthServer()
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let stamp = ClosureAdapter { request, _ in
            var request = request
            request.setValue("1", forHTTPHeaderField: "X-Signed")   // stands for a signature over the headers before it
            return request
        }
        let interceptor: any RequestInterceptor =
            switch chain {
            case .authInterceptor: auth
            case .composite: Interceptor(adapters: [auth], retriers: [auth])
            case .withAppAdapter: Interceptor(adapters: [auth, stamp], retriers: [auth])
            }
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1), configuration: api.mock.makeConfiguration(basedOn: .ephemeral), interceptor: interceptor)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<100 { group.addTask { try await provider.response(api.resource("/items/\(index)")).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // THEN every call is answered after one refresh, and once it is done a call leaving the queue carries the
        // new token: a handful of 401s (those sent before the refresh ended), not one per call. With an app's
        // adapter after the token, the request adapted before the wait is sent (re-adapting would skip it): 401s.
        #expect(statuses.count == 100 && statuses.allSatisfy { $0 == 200 })
        #expect(api.refreshCount == 1)
        if chain == .withAppAdapter {
            #expect(api.expiredResponseCount > 50)
        } else {
            #expect(api.expiredResponseCount < 50)
        }
    }

    @Test(
        "every slot held and a queue full of calls that can end only after the refresh: the refresh is sent at once, no deadlock",
        arguments: [1, 2])
    func refreshNeverQueues(limit: Int) async throws {
        let api = MockAuthServer()
        let refreshed = Signal()
        api.onRefresh { refreshed.fire() }
        // A server that answers these only once a refresh arrived: each holds its slot until then.
        api.mock.stub(.get, "/v1/held") { _ in
            await refreshed.wait()
            return .json(["ok": true])
        }
        // The access token expires within the refresh leeway: every authenticated call refreshes first, in adapt.
        let expiring = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: Date().addingTimeInterval(5))
        // Coalescing off: the blockers are identical GETs, each meant to hold a slot or a place in the queue.
        let provider = makeProvider(api, Scheduling(maximumCallsPerHost: limit, coalescesIdenticalCalls: false), credential: expiring)
        let blockers = (0..<(limit + 50)).map { _ in Task { try await provider.response(ScheduledCall("held")) } }
        for _ in 0..<limit { _ = try await api.mock.nextRequest(matching: .get, "/v1/held") }
        await waitUntilQueued(50, in: provider)   // every slot held, 50 calls queued behind them
        let calls = (0..<200).map { index in Task { try await provider.response(api.resource("/items/\(index)")) } }
        _ = try await api.mock.nextRequest(matching: .post)   // the refresh, sent past the queue
        for blocker in blockers { #expect(try await blocker.value.statusCode == 200) }
        for call in calls { #expect(try await call.value.statusCode == 200) }
        #expect(api.refreshCount == 1)
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
    }

    @Test("a refresh sent from the refresh's own task through the same provider is not queued either")
    func refreshFromItsOwnTask() async throws {
        let api = MockAuthServer()
        let refreshed = Signal()
        api.onRefresh { refreshed.fire() }
        api.mock.stub(.get, "/v1/held") { _ in
            await refreshed.wait()
            return .json(["ok": true])
        }
        let baseURL = api.baseURL
        let box = ProviderBox()
        let expiring = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: Date().addingTimeInterval(5))
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(expiring)) { credential, _ in
            // The provider itself, not the `network` handed in: recognised by the refresh's task.
            let tokens = try await box.provider!.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1), configuration: api.mock.makeConfiguration(basedOn: .ephemeral),
            interceptor: Interceptor(adapters: [auth], retriers: [auth]))
        box.provider = provider
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await api.mock.nextRequest(matching: .get, "/v1/held")
        let call = Task { try await provider.response(api.resource("/me")) }   // refreshes first (the token expires soon)
        _ = try await api.mock.nextRequest(matching: .post)
        #expect(try await blocker.value.statusCode == 200)
        #expect(try await call.value.statusCode == 200)
        #expect(api.refreshCount == 1)
    }

    @Test("calls made from tasks the refresh closure starts wait under the limits: only the refresh's own request goes past them")
    func refreshTreeKeepsTheLimits() async throws {
        let api = MockAuthServer()
        let meter = ConcurrencyMeter()
        api.mock.stub(.get, "/v1/side") { _ in
            meter.enter("side")
            defer { meter.leave("side") }
            try await Task.sleep(nanoseconds: 50_000_000)   // long enough for unlimited calls to overlap
            return .json(["ok": true])
        }
        let baseURL = api.baseURL
        let box = ProviderBox()
        let expiring = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: Date().addingTimeInterval(5))
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(expiring)) { credential, network in
            // The app warms a few things in parallel while it refreshes: calls that are not the refresh's.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { _ = try await box.provider?.response(ScheduledCall("side")) } }
                try await group.waitForAll()
            }
            let tokens = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCalls: 1, maximumCallsPerHost: 1), configuration: api.mock.makeConfiguration(basedOn: .ephemeral),
            interceptor: Interceptor(adapters: [auth], retriers: [auth]))
        box.provider = provider
        _ = try await provider.response(api.resource("/me"))   // refreshes first: the token expires within the leeway
        #expect(api.mock.requests(.get, "/v1/side").count == 10)
        #expect(meter.peak("side") == 1)
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
    }
}
