import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adds the app's own `Authorization` (no account: not a ``CachePartitioning`` interceptor).
struct AppTokenAdapter: RequestInterceptor {
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer app-token", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// Runs `work` while a `HEAD` is being adapted: something that happens while the `HEAD` is out.
struct WhileHeadIsOut: RequestInterceptor {
    let work: @Sendable () async throws -> Void
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        if request.httpMethod == "HEAD" { try await work() }
        return request
    }
}

/// The edges of a `HEAD` against the stored `GET` (RFC 9111 §4.3.5, RFC 9110 §9.3.2): what must leave the
/// stored `GET` as it is, and the policies a `HEAD` answered from it follows.
@Suite("Response cache: HEAD and the stored GET, edge cases (RFC 9111 §4.3.5)", SuiteTimeLimit.oneMinute)
struct CacheHeadEdgeTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http, interceptor: (any RequestInterceptor)? = nil) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: store, cachePolicy: policy, now: clock.now)
    }

    /// Stores `GET /v1/profile` (`ETag: "v1"`, `X-Revision: 1`), fresh for `maxAge` seconds.
    func storeProfile(maxAge: Int = 60) async throws -> NetworkProvider {
        server.stub(
            .get, "/v1/profile",
            .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=\(maxAge)", "ETag": "\"v1\"", "X-Revision": "1"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        return provider
    }

    /// The stored `GET` as `.cacheOnly` reads it: its `X-Revision`, or `nil` when it is gone.
    func storedRevision() async throws -> String? {
        do {
            return try await provider().response(CachedEndpoint(cachePolicy: .cacheOnly)).value(forHTTPHeaderField: "X-Revision")
        } catch NetworkError.notCached {
            return nil
        }
    }

    @Test("RFC 9111 §4.3.5 with §3.5: a HEAD carrying the app's own Authorization never updates the shared GET entry")
    func credentialsLeaveTheSharedEntry() async throws {
        _ = try await storeProfile()
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "X-Revision": "2"]))
        let signed = provider(interceptor: AppTokenAdapter())
        _ = try await signed.response(CachedEndpoint(method: .head))
        #expect(server.requests.last?.headers["Authorization"] == "Bearer app-token")
        #expect(try await storedRevision() == "1")   // neither freshened nor removed
        #expect(try await provider().response(CachedEndpoint()).report.cache != .hit)   // still stale
    }

    @Test("RFC 9111 §4.3.5: a HEAD 200 with no ETag, Last-Modified or Content-Length tells nothing: the stored GET stays as it was")
    func nothingToCompare() async throws {
        _ = try await storeProfile()
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "X-Revision": "2"]))
        _ = try await provider().response(CachedEndpoint(method: .head))
        #expect(try await storedRevision() == "1")
    }

    @Test("RFC 9111 §5.2.1.5: a HEAD request that says no-store only keeps its own exchange out: the stored GET stays")
    func requestNoStoreKeepsTheEntry() async throws {
        _ = try await storeProfile(maxAge: 600)
        server.stub(.head, "/v1/profile", .status(200, headers: ["ETag": "\"v1\"", "X-Revision": "2"]))
        _ = try await provider().response(CachedEndpoint(method: .head, headers: ["Cache-Control": "no-store"], cachePolicy: .reload))
        #expect(server.requests.count == 2)
        #expect(try await storedRevision() == "1")
    }

    @Test("RFC 9111 §4.1, §4.3.5: a HEAD 200 that says Vary: * does not update the stored GET; it is taken as stale and removed")
    func varyStar() async throws {
        _ = try await storeProfile()
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "Vary": "*", "X-Revision": "2"]))
        _ = try await provider().response(CachedEndpoint(method: .head))
        #expect(try await storedRevision() == nil)
    }

    @Test("RFC 9111 §4.3.5: a GET stored while the HEAD was out is not overwritten nor removed by the HEAD's answer")
    func newerGETWins() async throws {
        server.stub(
            .get, "/v1/profile",
            .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "X-Revision": "1"]),
            .json(Profile(name: "Lee"), headers: ["Cache-Control": "max-age=600", "ETag": "\"v2\"", "X-Revision": "2"]))
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "X-Revision": "1b"]))
        _ = try await provider().response(CachedEndpoint())
        let other = provider()
        let racing = provider(interceptor: WhileHeadIsOut { _ = try await other.response(CachedEndpoint(cachePolicy: .reload)) })
        _ = try await racing.response(CachedEndpoint(method: .head, cachePolicy: .reload))
        #expect(server.requests.map(\.method) == ["GET", "GET", "HEAD"])
        #expect(try await storedRevision() == "2")
    }

    @Test("RFC 9111 §4.3.5: a GET stored while the HEAD was out (none before) is not updated by the HEAD's answer")
    func entryStoredMeanwhileIsNotUpdated() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "X-Revision": "1"]))
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=900", "ETag": "\"v1\"", "X-Revision": "2"]))
        let other = provider()
        let racing = provider(interceptor: WhileHeadIsOut { _ = try await other.response(CachedEndpoint()) })
        _ = try await racing.response(CachedEndpoint(method: .head, cachePolicy: .reload))
        #expect(try await storedRevision() == "1")
    }

    @Test("RFC 5861 §4: under .staleIfError a HEAD with only-if-cached is answered by a stored GET within the allowance, as a GET is")
    func staleIfErrorOnlyIfCached() async throws {
        _ = try await storeProfile()
        clock.advance(by: 90)
        let head = CachedEndpoint(method: .head, headers: ["Cache-Control": "only-if-cached"], cachePolicy: .staleIfError(upTo: 60))
        let response = try await provider().response(head)
        #expect(response.statusCode == 200 && response.data.isEmpty)
        #expect(response.report.cache == .staleIfError)
        #expect(server.requests.count == 1)
        clock.advance(by: 60)   // 90 s stale now: past the allowance
        await #expect(throws: NetworkError.notCached) { try await provider().response(head) }
    }

    @Test("RFC 5861 §4: under .staleIfError a HEAD the server cannot answer falls back on the stored GET, as a GET does")
    func staleIfErrorFallback() async throws {
        _ = try await storeProfile()
        clock.advance(by: 90)
        server.stub(.head, "/v1/profile", .status(503))
        let response = try await provider().response(CachedEndpoint(method: .head, cachePolicy: .staleIfError(upTo: 60)))
        #expect(response.statusCode == 200 && response.data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(response.report.cache == .staleIfError)
        #expect(server.requests.map(\.method) == ["GET", "HEAD"])
    }

    @Test("RFC 9110 §15.5.5: a HEAD answered from a stored GET 404 meets the HEAD endpoint's statuses, as the server's 404 would")
    func storedNotFoundIsValidated() async throws {
        server.stub(.get, "/v1/gone", .status(404, headers: ["Cache-Control": "max-age=600"]))
        var get = CachedEndpoint(path: "/gone")
        get.acceptableStatusCodes = [200, 404]
        let provider = provider()
        _ = try await provider.response(get)   // stored: this endpoint accepts 404
        await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(CachedEndpoint(path: "/gone", method: .head)) }
        // and a GET endpoint that does not accept 404 gets the same error from the stored response
        await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(CachedEndpoint(path: "/gone")) }
        #expect(try await provider.response(get).statusCode == 404)
        #expect(server.requests.count == 1)
    }
}
