import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store whose `save` waits until the test lets it finish, while `delete` is immediate: the timing
/// that lets a late refresh undo a sign-out when writes are not ordered.
actor GatedSaveStore: CredentialStore {
    private var credential: Credential?
    let saveArrived = Signal()
    let releaseSave = Signal()

    init(_ credential: Credential?) { self.credential = credential }

    func load() -> Credential? { credential }
    func save(_ credential: Credential) async {
        saveArrived.fire()
        await releaseSave.wait()
        self.credential = credential
    }
    func delete() { credential = nil }
}

/// A store that counts its reads, yields inside each (so concurrent callers overlap it), can fail its first
/// reads, and can hold its reads until the test opens `gate`.
actor CountingStore: CredentialStore {
    private let credential: Credential?
    private var failuresLeft: Int
    private let gate: Signal?
    private(set) var reads = 0
    let readArrived = Signal()

    init(_ credential: Credential?, failingFirst failures: Int = 0, gate: Signal? = nil) {
        self.credential = credential
        self.failuresLeft = failures
        self.gate = gate
    }

    func load() async throws -> Credential? {
        reads += 1
        readArrived.fire()
        await Task.yield()
        if let gate { await gate.wait() }
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw CocoaError(.fileReadCorruptFile)
        }
        return credential
    }
    func save(_ credential: Credential) {}
    func delete() {}
}

/// Lets a test's refresh closure reach a provider made after the interceptor (what the `network`
/// argument makes unnecessary in apps).
final class ProviderBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: NetworkProvider?
    var provider: NetworkProvider? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            stored = newValue
        }
    }
}

@Suite("AuthInterceptor store, recognition and expiry", SuiteTimeLimit.threeMinutes)
struct AuthStoreAndExpiryTests {
    @Test func aSignOutIsNeverUndoneByARefreshWhoseSaveIsSlow() async throws {
        // GIVEN a refresh that succeeded and whose save to the store is still under way
        let api = MockAuthServer()
        let store = GatedSaveStore(MockAuthServer.initialCredential)
        let (provider, auth) = api.makeAuthenticatedProvider(store: store)
        let call = Task { try await provider.response(api.resource("/me")) }
        await store.saveArrived.wait()
        // WHEN the user signs out, and only then the save finishes (the yields give an unordered delete
        // the time to overtake the save; the outcome must not depend on them)
        let signOut = Task { try await auth.signOut() }
        while try await auth.currentCredential() != nil { await Task.yield() }
        for _ in 0..<100 { await Task.yield() }
        store.releaseSave.fire()
        try await signOut.value
        _ = await call.result   // it fails as signed out, or succeeds if it was resent first: either is fine
        // THEN the store ends signed out, as the interceptor is
        #expect(await store.load() == nil)
        #expect(try await auth.currentCredential() == nil)
    }

    @Test func theRefreshsOwnRequestIsRecognisedWhenSentThroughTheAuthenticatedProviderByAnyRoute() async throws {
        // GIVEN a refresh closure that ignores `network` and sends through the authenticated provider
        // itself, reached through a box (an endpoint that still says requiresAuthentication == true)
        let api = MockAuthServer()
        let box = ProviderBox()
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, _ in
            guard let provider = box.provider else { throw NetworkError.cancelled }
            let tokens = try await provider.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken),
                as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = api.mock.makeProvider(interceptor: auth)
        box.provider = provider
        // WHEN a request needs a refresh, THEN it succeeds (no deadlock) and the refresh carried no token
        #expect(try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self).token == "access-1")
        let refresh = try #require(api.mock.requests(.post, "/v1/auth/refresh").first)
        #expect(refresh.header("Authorization") == nil)
    }

    @Test func aTaskSpawnedDuringTheRefreshIsAuthenticatedNormallyAfterIt() async throws {
        // GIVEN a refresh closure that spawns a task, which sends a request once the refresh is over
        let api = MockAuthServer()
        let box = ProviderBox()
        let refreshDone = Signal()
        let spawned = Recorder<Task<MockAuthServer.Resource, any Error>>()
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, network in
            spawned.append(
                Task {
                    await refreshDone.wait()
                    guard let provider = box.provider else { throw NetworkError.cancelled }
                    return try await provider.request(api.resource("/later"), as: MockAuthServer.Resource.self)
                })
            let tokens = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken),
                as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = api.mock.makeProvider(interceptor: auth)
        box.provider = provider
        _ = try await provider.response(api.resource("/now"))
        // WHEN the spawned task sends after the refresh finished
        refreshDone.fire()
        let task = try #require(spawned.all.first)
        // THEN its request carried the new token and succeeded
        #expect(try await task.value.token == "access-1")
        #expect(api.mock.requests(.get, "/v1/later").map { $0.header("Authorization") } == ["Bearer access-1"])
    }

    @Test func eventStreamsFinishWhenTheInterceptorIsReleased() async {
        // GIVEN a listener task reading an interceptor's events, as the docs show it
        var auth: AuthInterceptor? = AuthInterceptor(baseURL: URL(string: "https://api.example.com")!) { credential, _ in credential }
        weak let weakAuth = auth
        let events = auth?.events() ?? AsyncStream(unfolding: { nil })
        let listener = Task {
            var count = 0
            for await _ in events { count += 1 }
            return count
        }
        // WHEN the interceptor is released
        auth = nil
        // THEN it is gone, and the loop ends
        #expect(weakAuth == nil)
        #expect(await listener.value == 0)
    }

    @Test func aStormAfterAJWTExpiredByTheClockSendsNo401AndOneRefresh() async throws {
        // GIVEN a credential with no expiry whose access token is a JWT that expired a minute ago
        let api = MockAuthServer(issuesJWTs: true)
        let expired = Credential(accessToken: MockAuthServer.jwt(subject: "access-0", expiresAt: Date() - 60), refreshToken: "refresh-0")
        let (provider, _) = api.makeAuthenticatedProvider(credential: expired)
        // WHEN 1,000 requests run at once
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for id in 0..<1_000 {
                group.addTask { try await provider.request(api.resource("/items/\(id)"), as: MockAuthServer.Resource.self).token }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        // THEN the token was refreshed once before sending: not one 401
        #expect(api.expiredResponseCount == 0)
        #expect(api.refreshCount == 1)
        #expect(tokens == [api.currentAccessToken])
    }

    @Test func jwtExpiryIsReadTolerantlyAndOnlyAsATimingHint() throws {
        let exp = Date(timeIntervalSince1970: 1_900_000_000)
        // GIVEN tokens as servers issue them, and things that are not JWTs
        let jwt = MockAuthServer.jwt(subject: "me", expiresAt: exp)
        let parts = jwt.split(separator: ".").map(String.init)
        let padded = parts[0] + "." + parts[1] + String(repeating: "=", count: (4 - parts[1].count % 4) % 4) + "." + parts[2]
        // THEN the claim is read with or without padding, and anything else is "unknown"
        #expect(JWTExpiry.date(in: jwt) == exp)
        #expect(JWTExpiry.date(in: padded) == exp)
        for notJWT in [
            "", "opaque-token", "a.b", "a.b.c.d.e", "x.!!!.y", parts[0] + "." + parts[0] + ".s",
            "h." + Data(#"{"exp":"soon"}"#.utf8).base64EncodedString() + ".s",
            "h." + Data(#"{"exp":1e400}"#.utf8).base64EncodedString() + ".s",
            "h." + String(repeating: "A", count: 20_000) + ".s",
        ] {
            #expect(JWTExpiry.date(in: notJWT) == nil)
        }
    }

    @Test func jwtExpiryCanBeTurnedOff() async throws {
        // GIVEN an expired JWT credential and an interceptor told not to read it
        let api = MockAuthServer(issuesJWTs: true)
        let expired = Credential(accessToken: MockAuthServer.jwt(subject: "access-0", expiresAt: Date() - 60), refreshToken: "refresh-0")
        let refreshes = Recorder<String>()
        let auth = AuthInterceptor(baseURL: api.baseURL, store: InMemoryCredentialStore(expired), readsTokenExpiry: false) { _, _ in
            refreshes.append("refresh")
            return Credential(accessToken: "refreshed", refreshToken: "r")
        }
        // WHEN a request is adapted, THEN the token is sent as it is, without a proactive refresh
        let request = try await auth.adapt(URLRequest(url: api.baseURL.appendingPathComponent("me")), for: RequestContext(endpoint: api.resource("/me")))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer " + expired.accessToken)
        #expect(refreshes.count == 0)
    }

    @Test func aRejectedRefreshAdoptsTheCredentialAnotherProcessSaved() async throws {
        // GIVEN an app and its extension sharing one store, both holding the same expired credential,
        // against a server with strict refresh-token rotation
        let api = MockAuthServer()
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let app = api.makeInterceptor(store: store)
        let appExtension = api.makeInterceptor(store: store)
        let appProvider = api.mock.makeProvider(interceptor: app)
        let extensionProvider = api.mock.makeProvider(interceptor: appExtension)
        #expect(try await appExtension.currentCredential() == MockAuthServer.initialCredential)
        // WHEN the app refreshes first, then the extension's refresh with the same refresh token is rejected
        #expect(try await appProvider.request(api.resource("/a"), as: MockAuthServer.Resource.self).token == "access-1")
        let resource = try await extensionProvider.request(api.resource("/b"), as: MockAuthServer.Resource.self)
        // THEN the extension adopted the app's credential and resent, instead of signing the user out
        #expect(resource.token == "access-1")
        #expect(api.refreshCount == 2)
        #expect(try await appExtension.currentCredential() == Credential(accessToken: "access-1", refreshToken: "refresh-1"))
        #expect(try await store.load() == Credential(accessToken: "access-1", refreshToken: "refresh-1"))
    }

    @Test func aRecentlyRefreshedTokenThatFailsAdoptsANewerStoredOne() async throws {
        // GIVEN an API whose expired status is 403, an app that refreshed moments ago, and its extension,
        // which refreshed after it
        let api = MockAuthServer(expiredStatusCode: 403)
        let clock = TestClock()
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let app = api.makeInterceptor(store: store, now: { clock.now })
        let appExtension = api.makeInterceptor(store: store, now: { clock.now })
        let appProvider = api.mock.makeProvider(interceptor: app)
        let extensionProvider = api.mock.makeProvider(interceptor: appExtension)
        _ = try await appProvider.response(api.resource("/a"))
        api.expireAccessTokens()
        _ = try await extensionProvider.response(api.resource("/b"))
        // WHEN the app's just-refreshed token gets 403
        let resource = try await appProvider.request(api.resource("/c"), as: MockAuthServer.Resource.self)
        // THEN it took the extension's credential from the store instead of failing or refreshing
        #expect(resource.token == "access-2")
        #expect(api.refreshCount == 2)
    }

    @Test func aChildTaskOfTheRefreshDoesNotDeadlockIt() async throws {
        // GIVEN a refresh closure that sends through the authenticated provider from a child task (async let)
        let api = MockAuthServer()
        let box = ProviderBox()
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, _ in
            guard let provider = box.provider else { throw NetworkError.cancelled }
            async let tokens = provider.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken),
                as: MockAuthServer.Tokens.self)
            let fresh = try await tokens
            return Credential(accessToken: fresh.accessToken, refreshToken: fresh.refreshToken)
        }
        let provider = api.mock.makeProvider(interceptor: auth)
        box.provider = provider
        // WHEN a request needs a refresh, THEN it succeeds (a deadlock would hit the time limit),
        // and the child's refresh request carried no token
        #expect(try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self).token == "access-1")
        #expect(api.mock.requests(.post, "/v1/auth/refresh").map { $0.header("Authorization") } == [nil])
    }

    @Test func aStatusSeenByAnUnrelatedTaskDoesNotDecideTheRefresh() async throws {
        // GIVEN a refresh closure that starts unrelated work (which gets a 400) and whose refresh call times out
        let api = MockAuthServer()
        api.mock.stub(.post, "/v1/auth/refresh") { _ in throw URLError(.timedOut) }
        api.mock.stub(.get, "/v1/flags", .status(400))
        let publicProvider = api.mock.makeProvider()
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let baseURL = api.baseURL
        let flagsDone = Signal()
        let auth = AuthInterceptor(baseURL: baseURL, store: store) { credential, network in
            Task {
                _ = try? await publicProvider.response(api.resource("/flags"))
                flagsDone.fire()
            }
            await flagsDone.wait()
            let tokens = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken),
                as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        // WHEN a request needs the refresh
        await #expect {
            try await api.mock.makeProvider(interceptor: auth).response(api.resource("/items/1"))
        } throws: { error in
            // THEN it failed for a transient reason, not as a rejection: the session is kept
            if case NetworkError.refreshFailed = error { return true } else { return false }
        }
        #expect(try await store.load() == MockAuthServer.initialCredential)
    }

    @Test func aFailedSaveNeverRollsTheCredentialBack() async throws {
        // GIVEN an API whose expired status is 403, and a store whose first save fails
        actor SaveFailsOnce: CredentialStore {
            private var credential: Credential?
            private var failNext = true
            init(_ credential: Credential?) { self.credential = credential }
            func load() -> Credential? { credential }
            func save(_ credential: Credential) throws {
                if failNext {
                    failNext = false
                    throw URLError(.cannotCreateFile)
                }
                self.credential = credential
            }
            func delete() { credential = nil }
        }
        let api = MockAuthServer(expiredStatusCode: 403)
        api.mock.stub(.get, "/v1/admin", .status(403))
        let (provider, auth) = api.makeAuthenticatedProvider(store: SaveFailsOnce(MockAuthServer.initialCredential))
        #expect(try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self).token == "access-1")
        // WHEN a genuine 403 comes moments after the refresh (the store still holds the old credential)
        await #expect(throws: NetworkError.self) { try await provider.response(api.resource("/admin")) }
        // THEN the interceptor keeps the refreshed credential, and the session goes on
        #expect(try await auth.currentCredential() == Credential(accessToken: "access-1", refreshToken: "refresh-1"))
        #expect(try await provider.request(api.resource("/items/2"), as: MockAuthServer.Resource.self).token == "access-1")
    }

    @Test func aSignInFreesTheRequestsWaitingOnTheOldSessionsRefresh() async throws {
        // GIVEN a refresh that does not answer until the end of the test, and a request waiting on it
        let api = MockAuthServer()
        let (arrived, release) = (Signal(), Signal())
        api.onRefresh {
            arrived.fire()
            await release.wait()
        }
        let (provider, auth) = api.makeAuthenticatedProvider()
        defer { release.fire() }
        let call = Task { try await provider.request(api.resource("/me"), as: MockAuthServer.Resource.self) }
        await arrived.wait()
        // WHEN the user signs in
        let fresh = try await api.mock.makeProvider().request(api.signIn(), as: MockAuthServer.Tokens.self)
        try await auth.signIn(with: Credential(accessToken: fresh.accessToken, refreshToken: fresh.refreshToken))
        // THEN the waiting request goes on at once with the new session (a wait would hit the time limit)
        #expect(try await call.value.token == fresh.accessToken)
    }

    @Test func manyFirstCallsAtOnceReadTheStoreOnce() async throws {
        // GIVEN a fresh interceptor over a store that has not been read yet
        let api = MockAuthServer(accessTokenIsValid: true)
        let store = CountingStore(MockAuthServer.initialCredential)
        let (provider, _) = api.makeAuthenticatedProvider(store: store)
        // WHEN 500 calls start at once
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<500 {
                group.addTask { try await provider.request(api.resource("/items/\(index)"), as: MockAuthServer.Resource.self).token }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        // THEN the store was read once, and every call was sent with its credential
        #expect(await store.reads == 1)
        #expect(tokens.count == 500 && tokens.allSatisfy { $0 == "access-0" })
    }

    @Test func aFailedStoreReadFailsItsWaitersAndTheNextCallReadsAgain() async throws {
        // GIVEN a store whose first read fails
        let store = CountingStore(MockAuthServer.initialCredential, failingFirst: 1)
        let auth = MockAuthServer().makeInterceptor(store: store)
        // WHEN calls wait on that read / THEN each fails with the store's error
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await #expect(throws: CocoaError.self) { try await auth.currentCredential() }
                }
            }
            try await group.waitForAll()
        }
        // AND a later call reads the store again and gets the credential
        #expect(try await auth.currentCredential() == MockAuthServer.initialCredential)
        #expect(await store.reads == 2)
    }

    @Test func aCallWaitingOnTheStoreReadLeavesWhenCancelled() async throws {
        // GIVEN a store read that does not finish until the test says so, and a call waiting on it
        let gate = Signal()
        let store = CountingStore(MockAuthServer.initialCredential, gate: gate)
        let auth = MockAuthServer().makeInterceptor(store: store)
        let first = Task { try await auth.currentCredential() }
        await store.readArrived.wait()
        let waiting = Task { try await auth.currentCredential() }
        // WHEN the waiting call is cancelled / THEN it ends with a cancellation while the read is still held
        // (a safety net opens the gate after 10 s, so a call that cannot leave fails this test instead of hanging it)
        let safetyNet = Task {
            try await Task.sleep(nanoseconds: 10_000_000_000)
            gate.fire()
        }
        defer { safetyNet.cancel() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        // AND the read, once it finishes, serves the call that started it
        gate.fire()
        #expect(try await first.value == MockAuthServer.initialCredential)
        #expect(await store.reads == 1)
    }

    @Test func dumpingTheInterceptorShowsNoCredential() async throws {
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com")!,
            store: InMemoryCredentialStore(Credential(accessToken: "secret-a", refreshToken: "secret-r"))
        ) { credential, _ in credential }
        _ = try await auth.currentCredential()
        var text = ""
        dump(auth, to: &text)
        #expect(!text.contains("secret") && text.contains("api.example.com"))
    }
}
