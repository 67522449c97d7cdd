import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Coalescing with the token, the cache, the switches and the monitors (issue 33).
@Suite("Coalescing: accounts, cache, switches, monitors")
struct CoalescingAuthCacheTests {
    let base = URL(string: "https://api.example.com/v1/")!

    private func auth(account: String?) -> AuthInterceptor {
        AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "access-0", refreshToken: "refresh-0", account: account)),
            readsTokenExpiry: false
        ) { _, _ in Credential(accessToken: "access-1", refreshToken: "refresh-1", account: account) }
    }

    @Test func aGroupMeetsA401WithOneRefreshAndOneResend() async throws {
        // GIVEN an API whose access token expired, an account-named credential, and the group's first exchange
        // held at the server until every caller joined it (so every caller meets the same 401, however slow
        // the machine: nothing races the joins)
        let api = MockAuthServer()
        let held = Signal()
        api.mock.stub(.get, "/v1/me") { request in
            guard request.header("Authorization") != "Bearer access-0" else {
                await held.wait()
                return .status(401)   // the expired token (RFC 9110 §15.5.2)
            }
            return .json(raw: #"{"name":"Kim"}"#)
        }
        let joins = JoinCounter()
        let (provider, _) = api.makeAuthenticatedProvider(
            credential: Credential(accessToken: "access-0", refreshToken: "refresh-0", account: "kim"), monitors: [joins])
        // WHEN 200 identical GETs are made at once, all joined before the first answer
        let calls = (0..<200).map { _ in Task { try await provider.response(api.resource("/me")) } }
        await joins.waitForJoins(199)
        held.fire()
        for call in calls { #expect(try await call.value.statusCode == 200) }
        // THEN the group met the 401 once: one refresh, one expired answer, one resend with the new token
        #expect(api.refreshCount == 1)
        let sent = api.mock.requests(.get, "/v1/me").map { $0.header("Authorization") }
        #expect(sent.count == 2)
        #expect(sent.first == "Bearer access-0")
        #expect(sent.last != "Bearer access-0")
    }

    @Test func twoAccountsNeverShareAnExchange() async throws {
        // GIVEN kim's call in flight
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let auth = auth(account: "kim")
        let provider = server.makeProvider(interceptor: auth)
        let kims = Task { try await provider.response(CoalescedEndpoint()) }
        _ = try await server.nextRequest()
        // WHEN lee signs in and makes the same call
        try await auth.signIn(with: Credential(accessToken: "access-lee", refreshToken: "refresh-lee", account: "lee"))
        let lees = Task { try await provider.response(CoalescedEndpoint()) }
        _ = try await server.nextRequest()
        gate.fire()
        _ = try await (kims.value, lees.value)
        // THEN each account had its own exchange, with its own token
        #expect(server.requests.compactMap { $0.headers["Authorization"] } == ["Bearer access-0", "Bearer access-lee"])
    }

    @Test func callsForNoKnownAccountNeverShare() async throws {
        // GIVEN a credential that names no account (the cache cannot tell whose the answer is either)
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let provider = server.makeProvider(interceptor: auth(account: nil))
        let calls = (0..<3).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        for _ in 0..<3 { _ = try await server.nextRequest() }
        gate.fire()
        for call in calls { _ = try await call.value }
        #expect(server.requests.count == 3)
    }

    @Test func aCacheMissJoinsTheExchangeInFlightAndALaterFreshHitSendsNothing() async throws {
        let gate = Signal()
        let server = gatedServer(gate: gate, response: .json(raw: #"{"id":1}"#, headers: ["Cache-Control": "max-age=60"]))
        let joins = JoinCounter()
        let provider = server.makeProvider(cache: MemoryResponseCache(), monitors: [joins])
        // WHEN ten calls miss the cache at once
        let calls = (0..<10).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        await joins.waitForJoins(9)
        gate.fire()
        for call in calls { #expect(try await call.value.report.cache == .miss) }
        // THEN one exchange answered them all, and a later call is a fresh hit (RFC 9111 §4.2) of its own
        #expect(server.requests.count == 1)
        let hit = try await provider.response(CoalescedEndpoint())
        #expect(hit.report.cache == .hit && !hit.report.joinedExistingCall)
        #expect(server.requests.count == 1)
    }

    @Test func aStaleEntryIsRevalidatedOnceForTheGroup() async throws {
        // GIVEN a stored entry with a validator, now stale (RFC 9111 §4.3.1)
        let clock = ManualClock()
        let gate = Signal()
        let server = MockServer()
        server.stub(.get, "/v1/users/1") { request in
            guard request.headers["If-None-Match"] == "\"v1\"" else {
                return .json(raw: #"{"id":1}"#, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""])
            }
            await gate.wait()
            return .status(304, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""])
        }
        let joins = JoinCounter()
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now, monitors: [joins])
        _ = try await provider.response(CoalescedEndpoint())
        clock.advance(by: 61)
        // WHEN twenty calls find it stale at once
        let calls = (0..<20).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        await joins.waitForJoins(19)
        gate.fire()
        // THEN one conditional request revalidated it for all of them, each getting the stored body
        for call in calls {
            let response = try await call.value
            #expect(response.report.cache == .revalidated && response.data == Data(#"{"id":1}"#.utf8))
        }
        #expect(server.requests.count == 2)
    }

    @Test func anEndpointOrTheProviderTurnsItOff() async throws {
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let off = NetworkProvider(scheduling: Scheduling(coalescesIdenticalCalls: false), configuration: server.makeConfiguration(basedOn: .default))
        let on = server.makeProvider()
        // WHEN three identical calls go through a provider that turned it off, three whose endpoint did, and
        // two whose endpoint turns it back on in that provider
        var calls = (0..<3).map { _ in Task { try await off.response(CoalescedEndpoint()) } }
        calls += (0..<3).map { _ in Task { try await on.response(CoalescedEndpoint(coalescesIdenticalCalls: false)) } }
        for _ in 0..<6 { _ = try await server.nextRequest() }
        let joins = JoinCounter()
        let onAgain = NetworkProvider(
            scheduling: Scheduling(coalescesIdenticalCalls: false), configuration: server.makeConfiguration(basedOn: .default), monitors: [joins])
        calls += (0..<2).map { _ in Task { try await onAgain.response(CoalescedEndpoint(path: "/users/2", coalescesIdenticalCalls: true)) } }
        await joins.waitForJoins(1)
        gate.fire()
        for call in calls { _ = try await call.value }
        // THEN each of the six was its own exchange, and the last two shared one
        #expect(server.requests.count == 7)
    }

    @Test func aCallWithItsOwnInterceptorNeverJoins() async throws {
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let provider = server.makeProvider()
        let tag = HeaderAdapter(name: "X-Tag", value: "same")
        let calls = (0..<2).map { _ in Task { try await provider.response(CoalescedEndpoint(), interceptor: tag) } }
        for _ in 0..<2 { _ = try await server.nextRequest() }
        gate.fire()
        for call in calls { _ = try await call.value }
        #expect(server.requests.count == 2)
    }

    @Test func theMonitorsAndTheLoggerSayACallJoined() async throws {
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let lines = Recorder<String>()
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins, NetworkLogger(sink: LogSink { lines.append($0) })])
        async let first = provider.response(CoalescedEndpoint())
        async let second = provider.response(CoalescedEndpoint())
        await joins.waitForJoins(1)
        gate.fire()
        _ = try await (first, second)
        await provider.waitForMonitors()
        #expect(lines.all.filter { $0 == "GET https://api.example.com/v1/users/1 ⇢ joined a call in flight" }.count == 1)
        #expect(lines.all.filter { $0.hasPrefix("GET https://api.example.com/v1/users/1 → 200") }.count == 2)   // each caller's line
    }
}
