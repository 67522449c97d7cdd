import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store whose writes take a while (a disk, a database): `store` signals, then waits for `release`.
final class SlowStore: ResponseCache, @unchecked Sendable {
    let inner = MemoryResponseCache()
    let storeStarted = Signal()
    let release = Signal()
    func cachedResponse(for key: CacheKey) async -> CachedResponse? { inner.cachedResponse(for: key) }
    func store(_ response: CachedResponse, for key: CacheKey) async {
        storeStarted.fire()
        await release.wait()
        inner.store(response, for: key)
    }
    func removeResponse(for key: CacheKey) async { inner.removeResponse(for: key) }
    func removeAll(inPartition partition: String?) async { inner.removeAll(inPartition: partition) }
    func removeAll() async { inner.removeAll() }
}

@Suite("Response cache: races and edges found in review", SuiteTimeLimit.oneMinute)
struct CacheRaceTests {
    let server = MockServer()
    let clock = ManualClock()
    let base = URL(string: "https://api.example.com/v1/")!

    func auth(_ account: String, token: String) -> AuthInterceptor {
        AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: token, refreshToken: "r", account: account)), readsTokenExpiry: false
        ) { c, _ in c }
    }

    func stubMe() {
        server.stub(.get, "/v1/me") { request in
            .json(Profile(name: request.headers["Authorization"] ?? "anonymous"), headers: ["Cache-Control": "private, max-age=60"])
        }
    }

    @Test("a sign-out while the answer is being written leaves nothing of the account behind")
    func signOutDuringStore() async throws {
        stubMe()
        let cache = SlowStore()
        let auth = auth("alice", token: "alice-token")
        let provider = server.makeProvider(interceptor: auth, cache: cache, now: clock.now)
        let call = Task { try await provider.response(CachedEndpoint(path: "/me", requiresAuthentication: true)) }
        await cache.storeStarted.wait()   // the partition check passed; the write is under way
        try await auth.signOut()   // clears alice's entries and returns
        cache.release.fire()
        _ = try await call.value
        #expect(cache.inner.count == 0)
    }

    @Test("a call authenticated by two AuthInterceptors (the provider's and its own) is not cached under either account")
    func perCallAuthIsFiledUnderProviderAccount() async throws {
        stubMe()
        let cache = MemoryResponseCache()
        let alice = auth("alice", token: "alice-token")
        let bob = auth("bob", token: "bob-token")
        let provider = server.makeProvider(interceptor: alice, cache: cache, now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        let bobs = try await provider.request(me, as: Profile.self, interceptor: bob)
        #expect(bobs.name == "Bearer bob-token")   // the last adapter's token went
        let alices = try await provider.response(me)
        let name = try JSONDecoder().decode(Profile.self, from: alices.data).name
        #expect(name == "Bearer alice-token")
    }

    @Test("cached-then-fresh keeps an endpoint's .disabled: nothing is stored")
    func cachedThenFreshIgnoresDisabled() async throws {
        server.stub(.get, "/v1/secret", .json(Profile(name: "secret-body"), headers: ["Cache-Control": "max-age=600"]))
        let cache = MemoryResponseCache()
        let provider = server.makeProvider(cache: cache, now: clock.now)
        for try await _ in provider.cachedThenFresh(CachedEndpoint(path: "/secret", cachePolicy: .disabled), as: Profile.self) {}
        #expect(cache.count == 0)
    }

    @Test("a 304 that says no-store removes the entry")
    func notModifiedWithNoStore() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let cache = MemoryResponseCache()
        let provider = server.makeProvider(cache: cache, now: clock.now)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 61)
        resource.setHeader("Cache-Control", to: "no-store, max-age=600")
        let second = try await provider.response(CachedEndpoint())
        let third = try await provider.response(CachedEndpoint())
        #expect(second.report.cache == .revalidated)
        #expect(third.report.cache == .miss)   // nothing was kept: a full load
        #expect(cache.count == 0)
    }

    @Test("a late 304 for v1 does not overwrite the v2 entry a concurrent call stored")
    func late304OverwritesNewerEntry() async throws {
        let cache = MemoryResponseCache()
        let hold = Signal()
        let version = Recorder<String>()
        server.stub(.get, "/v1/profile") { request in
            if request.headers["If-None-Match"] == "\"v1\"" {
                await hold.wait()   // the server decided 304 for v1 before it changed; the answer is slow
                return .status(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"])
            }
            let v = version.count == 0 ? "v1" : "v2"
            version.append(v)
            return .json(Profile(name: v), headers: ["ETag": "\"\(v)\"", "Cache-Control": "max-age=60"])
        }
        let provider = server.makeProvider(cache: cache, now: clock.now)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 61)
        let slow = Task { try await provider.response(CachedEndpoint()) }
        _ = try await server.nextRequest(matching: .get, "/v1/profile")
        _ = try await provider.response(CachedEndpoint(cachePolicy: .reload))   // stores v2
        hold.fire()
        _ = try await slow.value
        let now = try await provider.request(CachedEndpoint(), as: Profile.self)
        #expect(now.name == "v2")
    }

    @Test("a 304 the endpoint accepts, about another ETag, is no revalidation: the entry is dropped")
    func acceptable304Mismatch() async throws {
        server.stub(.get, "/v1/profile") { request in
            request.headers["If-None-Match"] != nil
                ? .status(304, headers: ["ETag": "\"other\"", "Cache-Control": "max-age=600"])
                : .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": "no-cache"])
        }
        let cache = MemoryResponseCache()
        let provider = server.makeProvider(cache: cache, now: clock.now)
        var endpoint = CachedEndpoint()
        endpoint.acceptableStatusCodes = Set(200..<400)
        _ = try await provider.response(endpoint)
        let second = try await provider.response(endpoint)
        let third = try await provider.response(endpoint)
        #expect(second.statusCode == 304 && second.report.cache == .miss)   // the caller gets the 304 it accepts
        #expect(third.report.statusCodes == [200] && third.report.cache == .miss)   // the entry was dropped: unconditional
    }

    @Test("signing and API-key query parameters appear in keys as digests")
    func keySecrets() throws {
        let url = try #require(
            URL(
                string:
                    "https://cdn.example.com/a.jpg?X-Amz-Credential=AKIA123&X-Amz-Signature=deadbeef&sig=azuresig&key=AIzaSyKEY&Signature=cfsig&auth=abc"))
        let key = HTTPCaching.keyURL(url)
        #expect(!key.contains("deadbeef") && !key.contains("azuresig") && !key.contains("AIzaSyKEY") && !key.contains("cfsig"))
    }

    @Test("an entry whose dates are NaN (a file with a valid checksum) answers without trapping")
    func nanDateTraps() async throws {
        let server = MockServer()
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let url = URL(string: "https://api.example.com/v1/profile")!
        let entry = CachedResponse(
            url: url, statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: Data("{}".utf8), requestDate: Date(timeIntervalSinceReferenceDate: .nan),
            responseDate: Date(timeIntervalSinceReferenceDate: .nan))
        await cache.store(entry, for: CacheKey(partition: nil, method: "GET", url: url.absoluteString))
        let provider = server.makeProvider(cache: cache, cachePolicy: .cacheElseLoad)
        server.stub(.get, "/v1/profile", .json(Profile(name: "x")))
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache != nil)   // answered (stale or reloaded), never a trap
    }
}
