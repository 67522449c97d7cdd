import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the responses' and the requests' own directives require of every policy (RFC 9111 §4.2.4, §4.3.4,
/// §5.1, §5.2), and what a `304` may bring to the disk.
@Suite("Response cache: directives the policies obey", SuiteTimeLimit.oneMinute)
struct CacheDirectiveTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http, cache: (any ResponseCache)? = nil) -> NetworkProvider {
        server.makeProvider(cache: cache ?? store, cachePolicy: policy, now: clock.now)
    }

    // MARK: Secrets on disk (RFC 9110 §15.4.5: a 304 repeats Content-Location)

    @Test("a 304's signed Content-Location reaches the disk only as digests, like the 200's")
    func notModifiedContentLocationIsDigestedOnDisk() async throws {
        // GIVEN a disk cache, and a resource whose Content-Location is a signed URL, repeated on its 304s
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let signed = "https://files.example.com/v1/profile.json?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=5ec12e7516a1de"
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["Content-Location": signed])
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider(cache: DiskResponseCache(directory: folder))
        _ = try await provider.response(CachedEndpoint())
        // WHEN the entry is revalidated, and the 304 signs the URL anew
        clock.advance(by: 61)
        resource.setHeader("Content-Location", to: signed.replacingOccurrences(of: "5ec12e7516a1de", with: "0ther5ec12e7"))
        let revalidated = try await provider.response(CachedEndpoint())
        // THEN no file below the folder holds either signature or the credential
        #expect(revalidated.report.cache == .revalidated)
        let bytes = try filesBytes(in: folder)
        #expect(!bytes.isEmpty)
        for secret in ["5ec12e7516a1de", "0ther5ec12e7", "AKIAEXAMPLE"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is on disk in the clear")
        }
        let stored = try #require(revalidated.value(forHTTPHeaderField: "Content-Location"))
        #expect(stored.contains("X-Amz-Signature=sha256-") && !stored.contains("0ther5ec12e7"))
    }

    @Test(
        "a Location or Content-Location that URL cannot parse reaches the disk only as a digest, on the 200 and the 304",
        arguments: ["https://files.example.com/my report.json", "https://files.example.com:port/report.json", "https://files example.com/{id}|.json"])
    func unparsedSignedLocationIsDigestedOnDisk(_ base: String) async throws {
        // GIVEN a disk cache, and a resource whose URL-valued headers are signed but not parsable by URL
        // (an invalid host or port everywhere; a space, `{` or `|` on iOS 15/16 and older Foundations)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let signed = "\(base)?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=5ec12e7516a1de"
        let resource = MockResource.json(
            Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["Content-Location": signed, "Location": signed])
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider(cache: DiskResponseCache(directory: folder))
        _ = try await provider.response(CachedEndpoint())
        // WHEN the entry is revalidated, and the 304 signs the URL anew
        clock.advance(by: 61)
        let resigned = signed.replacingOccurrences(of: "5ec12e7516a1de", with: "0ther5ec12e7")
        resource.setHeader("Content-Location", to: resigned)
        resource.setHeader("Location", to: resigned)
        let revalidated = try await provider.response(CachedEndpoint())
        // THEN no file below the folder holds either signature or the credential
        #expect(revalidated.report.cache == .revalidated)
        let bytes = try filesBytes(in: folder)
        #expect(!bytes.isEmpty)
        for secret in ["5ec12e7516a1de", "0ther5ec12e7", "AKIAEXAMPLE"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is on disk in the clear")
        }
    }

    // MARK: must-revalidate and no-cache (RFC 9111 §4.2.4, §5.2.2.2, §5.2.2.4)

    @Test(
        "cacheElseLoad revalidates an entry that says must-revalidate (stale) or no-cache, instead of answering with it",
        arguments: ["max-age=60, must-revalidate", "max-age=600, no-cache"])
    func cacheElseLoadRevalidates(_ control: String) async throws {
        // GIVEN an entry whose response forbids using it unvalidated once stale (or ever)
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: control)
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider(policy: .cacheElseLoad)
        _ = try await provider.response(CachedEndpoint())
        // WHEN it is asked for past max-age=60
        clock.advance(by: 120)
        let response = try await provider.response(CachedEndpoint())
        // THEN the server was asked, conditionally, and its 304 answered
        #expect(response.report.cache == .revalidated)
        try #require(server.requests.count == 2)
        #expect(server.requests[1].headers["If-None-Match"] == "\"v1\"")
        #expect(try JSONDecoder().decode(Profile.self, from: response.data) == Profile(name: "Kim"))
    }

    @Test(
        "cacheOnly fails with notCached, sending nothing, for an entry that says must-revalidate (stale) or no-cache",
        arguments: ["max-age=60, must-revalidate", "max-age=600, no-cache"])
    func cacheOnlyRefuses(_ control: String) async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: control))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 120)
        await #expect(throws: NetworkError.notCached) { try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly)) }
        #expect(server.requests.count == 1)
    }

    @Test("a must-revalidate entry still fresh answers cacheOnly and cacheElseLoad as a hit")
    func freshMustRevalidateAnswers() async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, must-revalidate"))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 30)
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly)).report.cache == .hit)
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .cacheElseLoad)).report.cache == .hit)
        #expect(server.requests.count == 1)
    }

    // MARK: only-if-cached (RFC 9111 §5.2.1.7)

    @Test("only-if-cached never reaches the network: a fresh entry answers, a stale or missing one fails with notCached")
    func onlyIfCached() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        // Nothing stored: no request, the error cacheOnly gives.
        await #expect(throws: NetworkError.notCached) { try await provider.response(offline) }
        #expect(server.requests.isEmpty)
        // Fresh: a hit.
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 30)
        #expect(try await provider.response(offline).report.cache == .hit)
        // Stale under the HTTP rules: not usable, and not revalidated either.
        clock.advance(by: 60)
        await #expect(throws: NetworkError.notCached) { try await provider.response(offline) }
        // Stale where the policy allows it: answered stale.
        var elseLoad = offline
        elseLoad.cachePolicy = .cacheElseLoad
        #expect(try await provider.response(elseLoad).report.cache == .staleHit)
        // A request's max-stale widens it, as without only-if-cached.
        let tolerant = CachedEndpoint(headers: ["Cache-Control": "only-if-cached, max-stale=3600"])
        #expect(try await provider.response(tolerant).report.cache == .hit)
        #expect(server.requests.count == 1)
    }

    @Test("only-if-cached on a provider without a cache, or with a no-cache entry, fails with notCached, sending nothing")
    func onlyIfCachedWithoutUsableEntry() async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=600, no-cache"))
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        await #expect(throws: NetworkError.notCached) { try await server.makeProvider().response(offline) }
        let provider = provider(policy: .cacheElseLoad)
        _ = try await provider.response(CachedEndpoint())
        await #expect(throws: NetworkError.notCached) { try await provider.response(offline) }
        #expect(server.requests.count == 1)
    }

    @Test("only-if-cached under staleIfError: an entry stale by at most N seconds answers, marked stale-if-error; no-cache never")
    func onlyIfCachedStaleIfError() async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60"))
        server.stub(.get, "/v1/news", resource: MockResource.json(Profile(name: "News"), etag: "\"n1\"", cacheControl: "max-age=60, no-cache"))
        let provider = provider(policy: .staleIfError(upTo: 600))
        _ = try await provider.response(CachedEndpoint())
        _ = try await provider.response(CachedEndpoint(path: "/news"))
        clock.advance(by: 300)
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        #expect(try await provider.response(offline).report.cache == .staleIfError)
        await #expect(throws: NetworkError.notCached) { try await provider.response(CachedEndpoint(path: "/news", headers: offline.headers)) }
        clock.advance(by: 400)   // 640 s past its freshness
        await #expect(throws: NetworkError.notCached) { try await provider.response(offline) }
        #expect(server.requests.count == 2)
    }

    @Test("cached-then-fresh shows a no-cache entry marked stale, then asks; with only-if-cached it asks nothing")
    func cachedThenFreshPreview() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "no-cache")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        var values: [CachedOrFresh<Profile>] = []
        for try await value in provider.cachedThenFresh(CachedEndpoint(), as: Profile.self) { values.append(value) }
        #expect(values.map(\.isStale) == [true])   // the 304 confirmed it: nothing more
        #expect(resource.notModifiedResponses == 1)
        values = []
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        await #expect(throws: NetworkError.notCached) {
            for try await value in provider.cachedThenFresh(offline, as: Profile.self) { values.append(value) }
        }
        #expect(values.isEmpty)   // no-cache: not usable without the server
        #expect(server.requests.count == 2)
    }

    @Test(
        "cached-then-fresh with only-if-cached shows what response(_:) would answer, under the endpoint's own policy (RFC 9111 §5.2.1.7)",
        arguments: [CachePolicy.http, .staleIfError(upTo: 600)])
    func cachedThenFreshOnlyIfCachedKeepsThePolicy(_ policy: CachePolicy) async throws {
        // GIVEN an entry fresh for 60 s, asked for 700 s later (past the policy's tolerance)
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60"))
        let provider = provider(policy: policy)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 760)
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        // WHEN both ask for it with only-if-cached
        await #expect(throws: NetworkError.notCached) { try await provider.response(offline) }
        var values: [CachedOrFresh<Profile>] = []
        await #expect(throws: NetworkError.notCached) {
            for try await value in provider.cachedThenFresh(offline, as: Profile.self) { values.append(value) }
        }
        // THEN neither shows the entry, and nothing is sent
        #expect(values.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test("cached-then-fresh with only-if-cached under staleIfError shows an entry within its tolerance, marked stale, sending nothing")
    func cachedThenFreshOnlyIfCachedWithinTolerance() async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60"))
        let provider = provider(policy: .staleIfError(upTo: 600))
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 360)
        let offline = CachedEndpoint(headers: ["Cache-Control": "only-if-cached"])
        var values: [CachedOrFresh<Profile>] = []
        for try await value in provider.cachedThenFresh(offline, as: Profile.self) { values.append(value) }
        #expect(values.map(\.isStale) == [true])
        #expect(values.map(\.isFromCache) == [true])
        #expect(server.requests.count == 1)
    }

    // MARK: a 304 dates the entry (RFC 9110 §6.6.1, RFC 9111 §4.3.4)

    @Test("a 304 without Date renews the entry from when it arrived: fresh for max-age after it")
    func notModifiedWithoutDate() async throws {
        // GIVEN a 200 dated when it was sent, fresh for 60 s; the server's 304s carry no Date
        let resource = MockResource.json(
            Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["Date": MockResource.httpDate(clock.now())])
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 61)
        resource.setHeader("Date", to: nil)
        let revalidated = try await provider.response(CachedEndpoint())
        // WHEN asked 30 s after the 304
        clock.advance(by: 30)
        let response = try await provider.response(CachedEndpoint())
        // THEN it is a hit, 30 s old, dated by the 304's arrival
        #expect(revalidated.report.cache == .revalidated)
        #expect(revalidated.value(forHTTPHeaderField: "Date") == MockResource.httpDate(clock.now() - 30))
        #expect(response.report.cache == .hit)
        #expect(response.value(forHTTPHeaderField: "Age") == "30")
        #expect(server.requests.count == 2)
    }

    @Test("a 304 without Age leaves no Age of the 200 behind: the validated response is new")
    func notModifiedWithoutAge() async throws {
        // GIVEN a 200 that was already 50 s old, fresh for 60 s; the 304 comes from the origin, without Age
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["Age": "50"])
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 11)
        resource.setHeader("Age", to: nil)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .revalidated)
        // WHEN asked 30 s later
        clock.advance(by: 30)
        // THEN it is still fresh
        #expect(try await provider.response(CachedEndpoint()).report.cache == .hit)
        #expect(server.requests.count == 2)
    }

    // MARK: Age (RFC 9111 §5.1)

    @Test("a folded Age (50, 50) counts as its first member: the response is already 50 s old")
    func foldedAge() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60", "Age": "50, 50"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 11)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(server.requests.count == 2)
    }

    /// The bytes of every regular file below `folder`, one after another.
    private func filesBytes(in folder: URL) throws -> Data {
        var bytes = Data()
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = enumerator?.nextObject() as? URL {
            guard try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            bytes.append(try Data(contentsOf: file))
        }
        return bytes
    }
}
