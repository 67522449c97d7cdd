import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store that records every key and entry it is given, around a memory store.
final class RecordingCache: ResponseCache, @unchecked Sendable {
    // @unchecked: `stored` is guarded by `lock`; `inner` is Sendable.
    let inner = MemoryResponseCache()
    private let lock = NSLock()
    private var stored: [(CacheKey, CachedResponse)] = []

    var everything: [(CacheKey, CachedResponse)] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func cachedResponse(for key: CacheKey) -> CachedResponse? { inner.cachedResponse(for: key) }
    func store(_ response: CachedResponse, for key: CacheKey) {
        lock.lock()
        stored.append((key, response))
        lock.unlock()
        inner.store(response, for: key)
    }
    func removeResponse(for key: CacheKey) { inner.removeResponse(for: key) }
    func removeAll(inPartition partition: String?) { inner.removeAll(inPartition: partition) }
    func removeAll() { inner.removeAll() }
}

@Suite("Response cache: accounts, secrets, cached-then-fresh", SuiteTimeLimit.oneMinute)
struct CacheAccountTests {
    let server = MockServer()
    let clock = ManualClock()
    let base = URL(string: "https://api.example.com/v1/")!

    /// An interceptor whose refresh hands out `access-N` for the same account.
    func auth(account: String?, refreshes: Recorder<String> = Recorder()) -> AuthInterceptor {
        AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "access-0", refreshToken: "refresh-0", account: account)),
            readsTokenExpiry: false
        ) { credential, _ in
            refreshes.append(credential.accessToken)
            return Credential(accessToken: "access-\(refreshes.count)", refreshToken: "refresh-\(refreshes.count)")
        }
    }

    /// `/v1/me` answers with the account whose token came, cacheable for 60 s.
    func stubMe() {
        server.stub(.get, "/v1/me") { request in
            .json(
                Profile(name: request.headers["Authorization"] ?? "anonymous"),
                headers: ["Cache-Control": "private, max-age=60", "ETag": "\"me\"", "Set-Cookie": "session=cookie-secret"])
        }
    }

    @Test("one account never receives another's entry, and signing in as another account clears the first's")
    func accountsAreSeparate() async throws {
        stubMe()
        let cache = MemoryResponseCache()
        let auth = auth(account: "alice")
        let provider = server.makeProvider(interceptor: auth, cache: cache, now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        #expect(try await provider.response(me).report.cache == .hit)
        // WHEN bob signs in on the same device
        try await auth.signIn(with: Credential(accessToken: "bob-token", refreshToken: "bob-refresh", account: "bob"))
        let bobs = try await provider.request(me, as: Profile.self)
        // THEN bob's call went to the server, and alice's entry is gone
        #expect(bobs == Profile(name: "Bearer bob-token"))
        #expect(server.requests.count == 2)
        #expect(cache.count == 1)
        // AND signing out clears bob's
        try await auth.signOut()
        #expect(cache.count == 0)
        await #expect(throws: NetworkError.missingCredential) { try await provider.response(me) }
    }

    @Test("a disk cache files the account's entries under a salted folder name, which sign-out finds and removes")
    func signOutClearsTheSaltedFolderOfADiskCache() async throws {
        // GIVEN alice's profile answered from a disk cache
        stubMe()
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let auth = auth(account: "alice")
        let provider = server.makeProvider(interceptor: auth, cache: DiskResponseCache(directory: folder), now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        #expect(try await provider.response(me).report.cache == .hit)
        let accountFolders = { (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { !$0.hasPrefix(".") && $0 != "public" } ?? [] }
        // THEN her entries are in one folder, not named by the (guessable) digest of her account
        #expect(accountFolders().count == 1)
        #expect(!accountFolders().contains(CacheKey.partition(forAccount: "alice")))
        // WHEN she signs out, THEN the folder is found and gone
        try await auth.signOut()
        #expect(accountFolders().isEmpty)
    }

    @Test("two accounts signed in at once (two providers, one store) each get only their own entry")
    func accountsSharingOneStore() async throws {
        // GIVEN alice's and bob's providers over one store, each with its own token
        stubMe()
        let cache = MemoryResponseCache()
        let alice = AuthInterceptor(baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "alice-token", refreshToken: "r", account: "alice")))
        { c, _ in c }
        let bob = AuthInterceptor(baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "bob-token", refreshToken: "r", account: "bob"))) {
            c, _ in c
        }
        let alices = server.makeProvider(interceptor: alice, cache: cache, now: clock.now)
        let bobs = server.makeProvider(interceptor: bob, cache: cache, now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        // WHEN both ask for /me twice, interleaved
        let first = try await alices.request(me, as: Profile.self)
        let second = try await bobs.request(me, as: Profile.self)
        let third = try await alices.response(me)
        let fourth = try await bobs.response(me)
        // THEN each got their own, from the server once and then from the cache
        #expect(first.name == "Bearer alice-token" && second.name == "Bearer bob-token")
        #expect(try JSONDecoder().decode(Profile.self, from: third.data).name == "Bearer alice-token")
        #expect(try JSONDecoder().decode(Profile.self, from: fourth.data).name == "Bearer bob-token")
        #expect(third.report.cache == .hit && fourth.report.cache == .hit)
        #expect(server.requests.count == 2 && cache.count == 2)
    }

    @Test("an answer that arrives after its account signed out is not stored")
    func answerAfterSignOutIsNotStored() async throws {
        // GIVEN a call of alice's whose answer is held back
        let gate = Signal()
        server.stub(.get, "/v1/me") { request in
            await gate.wait()
            return .json(Profile(name: request.headers["Authorization"] ?? "anonymous"), headers: ["Cache-Control": "max-age=60"])
        }
        let cache = MemoryResponseCache()
        let auth = auth(account: "alice")
        let provider = server.makeProvider(interceptor: auth, cache: cache, now: clock.now)
        let call = Task { try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true)) }
        _ = try await server.nextRequest(matching: .get, "/v1/me")
        // WHEN alice signs out before it arrives
        try await auth.signOut()
        gate.fire()
        let response = try await call.value
        // THEN the caller gets it, but the cache keeps nothing of alice's
        #expect(response.statusCode == 200)
        #expect(cache.count == 0)
    }

    @Test("an expired session clears the account's entries")
    func sessionExpiryClears() async throws {
        stubMe()
        server.stub(.get, "/v1/after") { _ in .status(401) }
        let cache = MemoryResponseCache()
        let auth = AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "a", refreshToken: "r", account: "alice")), readsTokenExpiry: false
        ) { _, _ in throw NetworkError.sessionExpired }
        let provider = server.makeProvider(interceptor: auth, cache: cache, now: clock.now)
        _ = try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true))
        #expect(cache.count == 1)
        await #expect(throws: NetworkError.sessionExpired) { try await provider.response(CachedEndpoint(path: "/after", requiresAuthentication: true)) }
        #expect(cache.count == 0)
    }

    @Test("authenticated calls without an account are not cached; calls that need no token share the public partition")
    func noAccountNoCaching() async throws {
        stubMe()
        let cache = MemoryResponseCache()
        let provider = server.makeProvider(interceptor: auth(account: nil), cache: cache, now: clock.now)
        _ = try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true))
        _ = try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true))
        #expect(server.requests.count == 2)
        #expect(cache.count == 0)
        _ = try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: false))
        #expect(try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: false)).report.cache == .hit)
    }

    @Test("a response to a request with credentials no AuthInterceptor tied to an account is not stored")
    func credentialsWithoutAccountAreNotStored() async throws {
        // GIVEN an app whose own adapter sets Authorization, and an AuthInterceptor hidden inside another interceptor
        stubMe()
        let cache = MemoryResponseCache()
        let ownAdapter = server.makeProvider(interceptor: HeaderAdapter(name: "Authorization", value: "Bearer static-key"), cache: cache, now: clock.now)
        let wrapped = server.makeProvider(interceptor: Wrapping(inner: auth(account: "alice")), cache: cache, now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        // WHEN each asks twice
        for provider in [ownAdapter, ownAdapter, wrapped, wrapped] { _ = try await provider.response(me) }
        // THEN every call reached the server and nothing was stored
        #expect(server.requests.count == 4)
        #expect(cache.count == 0)
    }

    /// An interceptor of the app's own around another: the provider cannot see what is inside.
    struct Wrapping: RequestInterceptor {
        let inner: any RequestInterceptor
        func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest { try await inner.adapt(request, for: context) }
        func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
            await inner.retry(request, dueTo: error, response: response, context: context)
        }
    }

    @Test("no secret is stored: no token, cookie or secret query value in any key or entry")
    func noSecretsStored() async throws {
        stubMe()
        server.stub(.get, "/v1/search", .json(Profile(name: "found"), headers: ["Cache-Control": "max-age=60", "X-Auth-Token": "echoed-secret"]))
        let cache = RecordingCache()
        let provider = server.makeProvider(interceptor: auth(account: "alice"), cache: cache, now: clock.now)
        _ = try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true))
        _ = try await provider.response(
            CachedEndpoint(path: "/search", queryItems: [.init(name: "q", value: "kim"), .init(name: "api_key", value: "key-secret")]))
        let everything = cache.everything
        #expect(everything.count == 2)
        let text = try everything.map { key, entry in "\(key.partition ?? "") \(key.url) " + String(decoding: try JSONEncoder().encode(entry), as: UTF8.self) }
            .joined(separator: "\n")
        for secret in ["access-0", "cookie-secret", "key-secret", "echoed-secret", "alice"] {
            #expect(!text.contains(secret), "\(secret) was stored")
        }
        #expect(text.contains("q=kim"))
        // The secret query value still tells entries apart: another value is another entry.
        _ = try await provider.response(CachedEndpoint(path: "/search", queryItems: [.init(name: "q", value: "kim"), .init(name: "api_key", value: "other")]))
        #expect(server.requests.count == 3)
    }

    @Test("a revalidation goes through the whole pipeline: an expired token is refreshed once and the 304 still answers")
    func revalidationWithRefresh() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile") { request in
            request.headers["Authorization"] == "Bearer access-0" && request.headers["If-None-Match"] != nil ? .status(401) : resource.response(to: request)
        }
        let refreshes = Recorder<String>()
        let provider = server.makeProvider(interceptor: auth(account: "alice", refreshes: refreshes), cache: MemoryResponseCache(), now: clock.now)
        let endpoint = CachedEndpoint(requiresAuthentication: true)
        _ = try await provider.response(endpoint)
        clock.advance(by: 61)
        let response = try await provider.response(endpoint)
        #expect(refreshes.count == 1)
        #expect(response.report.statusCodes == [401, 304])
        #expect(response.report.cache == .revalidated)
        #expect(server.requests.last?.headers["Authorization"] == "Bearer access-1")
        #expect(server.requests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test("cached-then-fresh: the stored value, then nothing when the server says 304, or the new value when it changed")
    func cachedThenFresh() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)
        // Nothing stored: the network's value only.
        var values: [CachedOrFresh<Profile>] = []
        for try await update in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Kim"] && values.map(\.isFromCache) == [false])
        // Stored and unchanged: the stored value (fresh), then the 304 ends the sequence.
        values = []
        for try await update in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Kim"] && values.map(\.isFromCache) == [true] && values.map(\.isStale) == [false])
        #expect(resource.notModifiedResponses == 1)
        // Stale and changed: the stored value marked stale, then the new one.
        clock.advance(by: 120)
        resource.update(body: MockResponse.json(Profile(name: "Lee")).body, etag: "\"v2\"")
        values = []
        for try await update in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Kim", "Lee"])
        #expect(values.map(\.isFromCache) == [true, false])
        #expect(values.map(\.isStale) == [true, false])
    }

    @Test("cached-then-fresh: a network failure ends the sequence after the stored value; leaving the loop cancels the request")
    func cachedThenFreshFailureAndCancellation() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60"]))
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)
        _ = try await provider.response(CachedEndpoint())
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        var names: [String] = []
        await #expect(throws: NetworkError.transportFailed(URLError(.notConnectedToInternet))) {
            for try await update in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) { names.append(update.value.name) }
        }
        #expect(names == ["Kim"])
        // Leaving after the stored value: the hanging request is stopped.
        server.stub(.get, "/v1/profile", MockResponse.json(Profile(name: "late")).delayed(by: .infinity))
        for try await update in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) {
            #expect(update.isFromCache)
            break
        }
        #expect(await server.waitForInterruptions(1))
    }
}
