import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A flag set once, read by many tasks (a call notes whether it started after the flag was set).
private final class Latch: @unchecked Sendable {
    // @unchecked: `isSet` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

/// What one call of a storm ended with: the token the server saw, or the library's error case.
private enum StormOutcome: Hashable, Sendable {
    case sent(token: String)
    case failed(String)
}

/// Review of the storm commits (issue 33): an ordinary adapt takes the token the interceptor published (see
/// `PublishedToken`) instead of a turn of the actor. Each test makes hundreds of concurrent calls around a change
/// of the session and checks that no call gets a token the actor would not have handed out at that moment, and
/// that the actor's bookkeeping (the single-flight refresh, the store read once, the proactive pause, the stale-401
/// recognition, the store adoption) still holds. They passed on the code as reviewed: regression tests.
@Suite("Review: the published token under a storm of calls", SuiteTimeLimit.oneMinute)
struct ReviewStormTests {
    static let stormSize = 300

    private static func call(_ provider: NetworkProvider, _ api: MockAuthServer, _ path: String) async -> StormOutcome {
        do {
            return .sent(token: try await provider.request(api.resource(path), as: MockAuthServer.Resource.self).token)
        } catch NetworkError.missingCredential {
            return .failed("missingCredential")
        } catch NetworkError.sessionExpired {
            return .failed("sessionExpired")
        } catch {
            return .failed("other: \(type(of: error))")
        }
    }

    /// `count` concurrent calls to `/<prefix>-<n>`.
    private static func storm(_ provider: NetworkProvider, _ api: MockAuthServer, prefix: String, count: Int = stormSize) async -> [StormOutcome] {
        await withTaskGroup(of: StormOutcome.self) { group in
            for index in 0..<count { group.addTask { await call(provider, api, "/\(prefix)-\(index)") } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// The tokens the server saw on requests whose path contains `marker` (one per attempt).
    private static func tokensSent(_ api: MockAuthServer, marker: String) -> [String] {
        api.mock.requests.filter { $0.path.contains(marker) }.map { request in
            guard let value = HeaderFields.value(of: api.header.name, in: request.headers), value.hasPrefix(api.header.prefix) else { return "<none>" }
            return String(value.dropFirst(api.header.prefix.count))
        }
    }

    /// Workers calling in a loop while `change` runs once `trigger` requests arrived; each call notes whether it
    /// started after `change` returned. Every worker makes `after` calls once the change returned.
    private static func callsAround(
        _ change: @escaping @Sendable () async throws -> Void, provider: NetworkProvider, api: MockAuthServer, trigger: Int = 60,
        workers: Int = 12, after: Int = 12
    ) async throws -> [(startedAfter: Bool, path: String, outcome: StormOutcome)] {
        let changed = Latch()
        return try await withThrowingTaskGroup(of: [(Bool, String, StormOutcome)].self) { group in
            group.addTask {
                while api.mock.requests.count < trigger { await Task.yield() }
                try await change()
                changed.set()
                return []
            }
            for worker in 0..<workers {
                group.addTask {
                    var results: [(Bool, String, StormOutcome)] = []
                    var madeAfter = 0
                    var index = 0
                    while madeAfter < after {
                        let startedAfter = changed.isSet
                        let path = startedAfter ? "/after-\(worker)-\(index)" : "/before-\(worker)-\(index)"
                        results.append((startedAfter, path, await call(provider, api, path)))
                        if startedAfter { madeAfter += 1 }
                        index += 1
                        if !startedAfter { await Task.yield() }
                    }
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.map { (startedAfter: $0.0, path: $0.1, outcome: $0.2) }
        }
    }

    // MARK: Sign-out and sign-in

    @Test func noCallStartedAfterSignOutReturnedIsSentOrGetsTheOldToken() async throws {
        // GIVEN a provider whose calls take the published token, under a stream of calls
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, auth) = try await api.warmedUp()
        // WHEN the user signs out in the middle of it
        let results = try await Self.callsAround({ try await auth.signOut() }, provider: provider, api: api)
        // THEN every call started after sign-out returned fails without a credential and is never sent
        let after = results.filter(\.startedAfter)
        #expect(after.count >= 12 * 12)
        #expect(after.allSatisfy { $0.outcome == .failed("missingCredential") }, "\(Set(after.map(\.outcome)))")
        #expect(Self.tokensSent(api, marker: "/after-").isEmpty)
        // and the calls made before it were sent with the token, or failed for want of one
        #expect(results.filter { !$0.startedAfter }.allSatisfy { $0.outcome == .sent(token: "access-0") || $0.outcome == .failed("missingCredential") })
    }

    @Test func everyCallStartedAfterSignInToAnotherAccountReturnedCarriesTheNewTokenOnItsFirstAttempt() async throws {
        // GIVEN a provider whose calls take the published token of account "a", under a stream of calls
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, auth) = try await api.warmedUp(credential: Credential(accessToken: "access-0", refreshToken: "refresh-0", account: "a"))
        let signInProvider = api.mock.makeProvider()
        let newToken = StormTokenBox()
        // WHEN account "b" signs in in the middle of it
        let results = try await Self.callsAround(
            {
                let tokens = try await signInProvider.request(api.signIn(), as: MockAuthServer.Tokens.self)
                newToken.set(tokens.accessToken)
                try await auth.signIn(with: Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, account: "b"))
            }, provider: provider, api: api)
        // THEN every call started after sign-in returned was sent only with "b"'s token (no 401 and resend)
        let token = try #require(newToken.value)
        let after = results.filter(\.startedAfter)
        #expect(after.count >= 12 * 12)
        #expect(after.allSatisfy { $0.outcome == .sent(token: token) })
        let sentAfter = Self.tokensSent(api, marker: "/after-")
        #expect(sentAfter.count == after.count)
        #expect(sentAfter.allSatisfy { $0 == token })
    }

    // MARK: A running refresh

    @Test func everyCallMadeWhileARefreshRunsWaitsForItAndIsSentOnceWithTheRefreshedToken() async throws {
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
        let first = Task { await Self.call(provider, api, "/first") }
        await arrived.wait()
        // WHEN hundreds of calls are made while it runs
        let storm = Task { await Self.storm(provider, api, prefix: "during") }
        while await auth.refreshWaiterCount < Self.stormSize, Self.tokensSent(api, marker: "/during-").isEmpty {
            await Task.yield()   // until all wait for the refresh (the first call waits on it in its retry, uncounted), or one (wrongly) was sent
        }
        // THEN none was sent before the refresh ended: all wait on the one refresh
        #expect(Self.tokensSent(api, marker: "/during-").isEmpty)
        #expect(await auth.refreshWaiterCount == Self.stormSize)
        release.fire()
        let outcomes = await storm.value
        #expect(await first.value == .sent(token: "access-1"))
        #expect(outcomes.allSatisfy { $0 == .sent(token: "access-1") })
        #expect(Self.tokensSent(api, marker: "/during-").allSatisfy { $0 == "access-1" })
        #expect(api.refreshCount == 1)
        #expect(api.expiredResponseCount == 1)
    }

    @Test func callsThatTookTheOldTokenBeforeTheServerExpiredItShareOneRefresh() async throws {
        // GIVEN calls took the published token, which the server then expires (the held-token list: a stale 401)
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, _) = try await api.warmedUp()
        api.expireAccessTokens()
        // WHEN hundreds of calls are made at once
        let outcomes = await Self.storm(provider, api, prefix: "stale")
        // THEN one refresh renews the token for all of them, each resent at most once
        #expect(outcomes.allSatisfy { $0 == .sent(token: "access-1") })
        #expect(api.refreshCount == 1)
        #expect(Self.tokensSent(api, marker: "/stale-").filter { $0 == "access-1" }.count == Self.stormSize)
    }

    // MARK: An expired session

    @Test func noCallAfterTheSessionExpiredIsSent() async throws {
        // GIVEN calls took the published token, then the refresh token was rejected (RFC 6749 §5.2 invalid_grant)
        let api = MockAuthServer(accessTokenIsValid: true)
        let (provider, _) = try await api.warmedUp()
        api.setRefreshAnswer(.reject)
        api.expireAccessTokens()
        #expect(await Self.call(provider, api, "/first") == .failed("sessionExpired"))
        // WHEN hundreds of calls are made
        let outcomes = await Self.storm(provider, api, prefix: "expired")
        // THEN all fail with the expired session and none is sent
        #expect(outcomes.allSatisfy { $0 == .failed("sessionExpired") })
        #expect(Self.tokensSent(api, marker: "/expired-").isEmpty)
        #expect(api.refreshCount == 1)
    }

    // MARK: A known expiry

    @Test func whenTheKnownExpiryEntersTheLeewayOneProactiveRefreshServesTheWholeStorm() async throws {
        // GIVEN calls took a published token that expires in an hour (leeway 60 s)
        let api = MockAuthServer(accessTokenIsValid: true)
        let clock = TestClock()
        let credential = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(3_600))
        let (provider, _) = try await api.warmedUp(now: { clock.now }, credential: credential)
        // WHEN the clock comes within the leeway and hundreds of calls are made at once
        clock.advance(by: 3_600 - 30)
        let outcomes = await Self.storm(provider, api, prefix: "leeway")
        // THEN one refresh ran before any was sent: none carried the old token, none met a 401
        #expect(outcomes.allSatisfy { $0 == .sent(token: "access-1") })
        #expect(Self.tokensSent(api, marker: "/leeway-").allSatisfy { $0 == "access-1" })
        #expect(api.refreshCount == 1)
        #expect(api.expiredResponseCount == 0)
    }

    @Test func whileAFailedProactiveRefreshPausesTheStormIsSentWithTheCurrentTokenAndStartsNoOtherRefresh() async throws {
        // GIVEN a token within the leeway whose proactive refresh failed for a transient reason (a 503)
        let api = MockAuthServer(accessTokenIsValid: true)
        let clock = TestClock()
        let credential = Credential(accessToken: "access-0", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(3_600))
        let (provider, _) = try await api.warmedUp(now: { clock.now }, credential: credential)
        api.setRefreshAnswer(.unavailable)
        clock.advance(by: 3_600 - 30)
        #expect(await Self.call(provider, api, "/first") == .sent(token: "access-0"))
        let refreshes = api.refreshCount
        #expect(refreshes >= 1)
        // WHEN hundreds of calls are made during the pause
        let outcomes = await Self.storm(provider, api, prefix: "paused")
        // THEN they are sent with the current token and no other refresh starts
        #expect(outcomes.allSatisfy { $0 == .sent(token: "access-0") })
        #expect(api.refreshCount == refreshes)
    }

    // MARK: The store

    @Test func aStormAtLaunchReadsTheStoreOnce() async throws {
        // GIVEN an interceptor whose store read is held open
        let api = MockAuthServer(accessTokenIsValid: true)
        let gate = Signal()
        let store = CountingStore(MockAuthServer.initialCredential, gate: gate)
        let (provider, _) = api.makeAuthenticatedProvider(store: store)
        // WHEN hundreds of calls are made at launch
        let storm = Task { await Self.storm(provider, api, prefix: "launch") }
        await store.readArrived.wait()
        gate.fire()
        let outcomes = await storm.value
        // THEN the store was read once and every call carries its token
        #expect(await store.reads == 1)
        #expect(outcomes.allSatisfy { $0 == .sent(token: "access-0") })
    }

    @Test func aCredentialAdoptedFromTheSharedStoreIsWhatTheNextStormCarries() async throws {
        // GIVEN an app and its extension sharing a store; the extension refreshed (rotating the refresh token)
        let api = MockAuthServer(accessTokenIsValid: true)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (app, _) = api.makeAuthenticatedProvider(store: store)
        let (appExtension, _) = api.makeAuthenticatedProvider(store: store)
        #expect(await Self.call(app, api, "/app-warm") == .sent(token: "access-0"))
        api.expireAccessTokens()
        #expect(await Self.call(appExtension, api, "/extension") == .sent(token: "access-1"))
        // WHEN the app's storm meets 401s, its refresh is rejected (spent refresh token) and it adopts the store's
        let first = await Self.storm(app, api, prefix: "adopting")
        #expect(first.allSatisfy { $0 == .sent(token: "access-1") })
        let refreshes = api.refreshCount
        let expired = api.expiredResponseCount
        // THEN the next storm carries the adopted token on every first attempt
        let next = await Self.storm(app, api, prefix: "adopted")
        #expect(next.allSatisfy { $0 == .sent(token: "access-1") })
        #expect(Self.tokensSent(api, marker: "/adopted-").count == Self.stormSize)
        #expect(api.refreshCount == refreshes)
        #expect(api.expiredResponseCount == expired)
    }

    @Test func aCredentialAdoptedAfterA403ForARecentlyRefreshedTokenIsPublishedToTheNextStorm() async throws {
        // GIVEN an API whose expired status is 403 and an app that refreshed moments ago (its clock stands still)
        let api = MockAuthServer(expiredStatusCode: 403)
        let clock = TestClock()
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (app, _) = api.makeAuthenticatedProvider(store: store, now: { clock.now })
        #expect(await Self.call(app, api, "/app-first") == .sent(token: "access-1"))
        // and its extension, sharing the store, refreshed since (the app's token is no longer valid)
        let (appExtension, _) = api.makeAuthenticatedProvider(store: store)
        api.expireAccessTokens()
        #expect(await Self.call(appExtension, api, "/extension") == .sent(token: "access-2"))
        // WHEN the app's call meets a 403 with its recent token: no refresh, the store's credential is adopted
        #expect(await Self.call(app, api, "/app-adopting") == .sent(token: "access-2"))
        let refreshes = api.refreshCount
        let expired = api.expiredResponseCount
        // THEN the next storm carries the adopted token on every first attempt (it was published when adopted)
        let next = await Self.storm(app, api, prefix: "adopted403")
        #expect(next.allSatisfy { $0 == .sent(token: "access-2") })
        #expect(Self.tokensSent(api, marker: "/adopted403-").count == Self.stormSize)
        #expect(api.refreshCount == refreshes)
        #expect(api.expiredResponseCount == expired)
    }
}

/// The token a sign-in returned, set by the task that signs in.
private final class StormTokenBox: @unchecked Sendable {
    // @unchecked: `token` is guarded by `lock`.
    private let lock = NSLock()
    private var token: String?

    var value: String? {
        lock.lock()
        defer { lock.unlock() }
        return token
    }

    func set(_ token: String) {
        lock.lock()
        self.token = token
        lock.unlock()
    }
}
