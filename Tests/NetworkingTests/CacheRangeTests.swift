import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `GET` with one byte `Range` is answered `206 Partial Content` from a complete stored response
/// (RFC 9110 §14.2, RFC 9111 §3.4, §4); anything the cache cannot compute goes to the server.
@Suite("Response cache: Range requests (RFC 9110 §14.2, RFC 9111 §3.4)", SuiteTimeLimit.oneMinute)
struct CacheRangeTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let digits = Data("0123456789".utf8)

    func provider(policy: CachePolicy = .http) -> NetworkProvider {
        server.makeProvider(cache: store, cachePolicy: policy, now: clock.now)
    }

    /// Stores `/v1/file` ("0123456789", `ETag: "v1"`), fresh for 600 s (or `cacheControl`).
    func storeFile(etag: String = "\"v1\"", cacheControl: String = "max-age=600") async throws -> (NetworkProvider, MockResource) {
        let resource = MockResource(body: digits, etag: etag, cacheControl: cacheControl, headers: ["Content-Type": "text/plain"])
        server.stub(.get, "/v1/file", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/file"))
        return (provider, resource)
    }

    func ranged(_ headers: [String: String]) -> CachedEndpoint {
        CachedEndpoint(path: "/file", headers: headers)
    }

    @Test(
        "RFC 9110 §14.1.2, §14.4, §15.3.7: one byte range is a 206 from the fresh entry, with Content-Range and Content-Length",
        arguments: [
            ("bytes=2-5", "2345", "bytes 2-5/10"), ("bytes=7-", "789", "bytes 7-9/10"), ("bytes=-3", "789", "bytes 7-9/10"),
            ("bytes=8-20", "89", "bytes 8-9/10"), ("bytes=-20", "0123456789", "bytes 0-9/10"), ("Bytes=0-0", "0", "bytes 0-0/10"),
        ])
    func singleRange(_ range: String, _ body: String, _ contentRange: String) async throws {
        let (provider, _) = try await storeFile()
        let response = try await provider.response(ranged(["Range": range]))
        #expect(response.statusCode == 206)
        #expect(String(decoding: response.data, as: UTF8.self) == body)
        #expect(response.value(forHTTPHeaderField: "Content-Range") == contentRange)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == String(body.utf8.count))
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(response.report.cache == .hit)
        #expect(server.requests.count == 1)
    }

    @Test(
        "RFC 9110 §14.2: several ranges, another unit, or a range that does not parse go to the server; the cache does not answer",
        arguments: ["bytes=0-1,4-5", "items=0-1", "bytes=5-2", "bytes=x-"])
    func notComputed(_ range: String) async throws {
        let (provider, resource) = try await storeFile()
        let response = try await provider.response(ranged(["Range": range]))
        #expect(response.statusCode == 200)   // the mock answers these with the whole body
        #expect(response.report.cache == nil)
        #expect(server.requests.count == 2)
        #expect(server.requests.dropFirst().first?.headers["Range"] == range)
        #expect(resource.fullResponsesToRanges == 1)
    }

    @Test("RFC 9110 §15.5.17: an unsatisfiable range goes to the server, whose 416 the endpoint checks as usual")
    func unsatisfiable() async throws {
        let (provider, resource) = try await storeFile()
        await #expect(throws: NetworkError.invalidStatusCode(416)) { try await provider.response(ranged(["Range": "bytes=10-"])) }
        #expect(resource.unsatisfiableRangeResponses == 1)
        #expect(try await provider.response(CachedEndpoint(path: "/file")).report.cache == .hit)   // the entry stays
    }

    @Test("RFC 9111 §3.4: a stale entry is not revalidated for a range; the server's 206 is not stored and the entry stays")
    func staleEntry() async throws {
        let (provider, resource) = try await storeFile(cacheControl: "max-age=60")
        clock.advance(by: 61)
        let response = try await provider.response(ranged(["Range": "bytes=0-3"]))
        #expect(response.statusCode == 206)
        #expect(String(decoding: response.data, as: UTF8.self) == "0123")
        #expect(server.requests.dropFirst().first?.headers["If-None-Match"] == nil)
        #expect(resource.partialResponses == 1)
        // AND the complete entry was neither replaced nor removed: a plain call revalidates it
        let plain = try await provider.response(CachedEndpoint(path: "/file"))
        #expect(plain.report.cache == .revalidated)
        #expect(plain.data == digits)
    }

    @Test("RFC 9110 §13.1.5: If-Range with the entry's strong ETag gets the range; with another validator, the whole entry")
    func ifRange() async throws {
        let (provider, _) = try await storeFile()
        let matching = try await provider.response(ranged(["Range": "bytes=0-1", "If-Range": "\"v1\""]))
        let other = try await provider.response(ranged(["Range": "bytes=0-1", "If-Range": "\"v0\""]))
        #expect(matching.statusCode == 206 && String(decoding: matching.data, as: UTF8.self) == "01")
        #expect(other.statusCode == 200 && other.data == digits)
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9110 §8.8.3.2, §13.1.5: a weak ETag never matches If-Range; If-Range without Range bypasses the cache")
    func ifRangeWeak() async throws {
        let (provider, _) = try await storeFile(etag: "W/\"v1\"")
        let weak = try await provider.response(ranged(["Range": "bytes=0-1", "If-Range": "W/\"v1\""]))
        #expect(weak.statusCode == 200 && weak.data == digits)
        #expect(weak.report.cache == .hit)
        _ = try await provider.response(ranged(["If-Range": "W/\"v1\""]))
        #expect(server.requests.count == 2)
    }

    @Test("only-if-cached: a range the cache computes answers; one it cannot fails with notCached, nothing sent")
    func onlyIfCached() async throws {
        let (provider, _) = try await storeFile()
        let answered = try await provider.response(ranged(["Range": "bytes=1-2", "Cache-Control": "only-if-cached"]))
        #expect(answered.statusCode == 206)
        await #expect(throws: NetworkError.notCached) {
            try await provider.response(ranged(["Range": "bytes=0-1,4-5", "Cache-Control": "only-if-cached"]))
        }
        #expect(server.requests.count == 1)
    }

    @Test("a 206 reaches the endpoint's status check as the server's would: an endpoint that accepts only 200 fails alike")
    func partialIsValidated() async throws {
        let (provider, _) = try await storeFile()
        var strict = ranged(["Range": "bytes=0-1"])
        strict.acceptableStatusCodes = [200]
        await #expect(throws: NetworkError.invalidStatusCode(206)) { try await provider.response(strict) }
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9111 §5.2.1.4: a range request that says no-cache goes to the server; a redirected answer is not filed under the first URL")
    func revalidateAndRedirect() async throws {
        let (_, resource) = try await storeFile()
        let revalidating = provider()
        let response = try await revalidating.response(ranged(["Range": "bytes=0-1", "Cache-Control": "no-cache"]))
        #expect(response.statusCode == 206)
        #expect(resource.partialResponses == 1)
        // a redirect to the file: its answer was never stored under /moved, so the range goes to the server
        server.stub(.get, "/v1/moved", .status(302, headers: ["Location": "/v1/file"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/moved"))
        let moved = try await provider.response(CachedEndpoint(path: "/moved", headers: ["Range": "bytes=0-1"]))
        #expect(moved.statusCode == 206)
        #expect(resource.partialResponses == 2)
    }
}
