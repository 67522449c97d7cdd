// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Caching.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct Feed: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/feed" }
    var cachePolicy: CachePolicy? { .staleIfError(upTo: 86_400) }   // offline: up to a day old
}

struct Orders: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/orders" }
    var cachePolicy: CachePolicy? { .keepForOffline(upTo: 7 * 86_400) }   // what it last showed, up to a week old
}

/// The page's keep-for-offline snippet.
func ordersAreOffline(provider: NetworkProvider) async throws -> Bool {
let orders = try await provider.response(Orders())
let isOffline = orders.report.cache == .staleIfError   // the kept copy: the server could not answer
    return isOffline
}

struct ProfilePhoto: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/photo" }
    var knownTag: String?   // the ETag of the copy the app keeps
    var headers: [String: String] { knownTag.map { ["If-None-Match": $0] } ?? [:] }
    var acceptableStatusCodes: Set<Int> { Set(200..<300).union([304]) }
}

/// The page's conditional-request snippet.
func photoIsCurrent(provider: NetworkProvider) async throws -> Bool {
let response = try await provider.response(ProfilePhoto(knownTag: "\"v1\""))
let isCurrent = response.statusCode == 304   // from the cache when its entry is fresh and says "v1"
    return isCurrent
}

/// The page's screen model around its `load()` snippet.
@MainActor
final class CachedProfileModel {
    let provider: NetworkProvider
    var user: User?
    var isOutdated = false
    var message = ""

    init(provider: NetworkProvider) { self.provider = provider }

func load() async {
    do {
        for try await update in provider.cachedThenFresh(UserAPI.user(id: 1), as: User.self) {
            user = update.value
            isOutdated = update.isStale
        }
    } catch {
        message = "\(error)"   // the stored value (if any) is already on screen
    }
}
}

/// The page's first snippet, as a function of the interceptor it uses.
func cachingProvider(auth: AuthInterceptor) async throws -> (NetworkProvider, User) {
let provider = NetworkProvider(
    interceptor: auth,
    cache: DiskResponseCache.inCachesDirectory(maximumBytes: 50 * 1_024 * 1_024)
)
let user = try await provider.request(UserAPI.user(id: 1), as: User.self)   // from the cache when fresh
    return (provider, user)
}

/// The page's report snippet.
func describeCache(of provider: NetworkProvider) async throws {
let response = try await provider.response(UserAPI.user(id: 1))
switch response.report.cache {
case .hit?: print("no request was sent")
case .revalidated?: print("the server said 304")
case .miss?: print("the server's full answer")
case let result? where result.isStale: print("an old answer: show a banner")
default: print("not cached")
}
}

/// The page's sign-in snippet.
func signInWithAccount(auth: AuthInterceptor, tokens: (access: String, refresh: String), userID: String) async throws {
try await auth.signIn(with: Credential(accessToken: tokens.access, refreshToken: tokens.refresh, account: userID))
}

@Suite("Docs/Caching.md snippets", SuiteTimeLimit.oneMinute)
struct CachingDocSnippetTests {
    @Test func theTestingSnippetRevalidatesOnce() async throws {
let server = MockServer()
let clock = ManualClock()
let profile = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
server.stub(.get, "/v1/users/1", resource: profile)
let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)

_ = try await provider.request(UserAPI.user(id: 1), as: User.self)
clock.advance(by: 61)
_ = try await provider.request(UserAPI.user(id: 1), as: User.self)
// profile.fullResponses == 1, profile.notModifiedResponses == 1
        #expect(profile.fullResponses == 1 && profile.notModifiedResponses == 1)
    }

    @Test func theConditionalSnippetIsAnsweredByTheCache() async throws {
        // GIVEN a stored photo, fresh, with ETag "v1"
        let server = MockServer()
        let photo = MockResource(body: Data("png".utf8), etag: "\"v1\"", cacheControl: "max-age=600")
        server.stub(.get, "/v1/photo", resource: photo)
        let provider = server.makeProvider(cache: MemoryResponseCache())
        _ = try await provider.response(ProfilePhoto())
        // WHEN the app checks its copy, THEN the cache says 304 and nothing is sent
        #expect(try await photoIsCurrent(provider: provider))
        #expect(server.requests.count == 1)
    }

    @Test func theStaleWhileRevalidateSnippetAnswersAtOnceThenRenews() async throws {
let server = MockServer()
let clock = ManualClock()
let profile = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=600")
server.stub(.get, "/v1/users/1", resource: profile)
let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)

_ = try await provider.request(UserAPI.user(id: 1), as: User.self)
clock.advance(by: 90)
let stale = try await provider.response(UserAPI.user(id: 1))   // at once: .staleWhileRevalidate
await provider.waitForBackgroundRevalidations()
let fresh = try await provider.response(UserAPI.user(id: 1))   // .hit: the 304 renewed the entry
        #expect(stale.report.cache == .staleWhileRevalidate && stale.report.statusCodes.isEmpty)
        #expect(fresh.report.cache == .hit)
        #expect(profile.fullResponses == 1 && profile.notModifiedResponses == 1)
    }

    @Test @MainActor func theScreenShowsTheStoredUserThenTheServersAndTheFeedFallsBackWhenOffline() async throws {
        // GIVEN a stored user that changed on the server since
        let server = MockServer()
        let clock = ManualClock()
        let resource = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/users/1", resource: resource)
        server.stub(.get, "/v1/feed", .json([User(id: 2, name: "Lee")], headers: ["Cache-Control": "max-age=60"]))
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)
        _ = try await provider.response(UserAPI.user(id: 1))
        _ = try await provider.response(Feed())
        clock.advance(by: 3_600)
        resource.update(body: MockResponse.json(User(id: 1, name: "Kim Lee")).body, etag: "\"v2\"")
        server.stub(.get, "/v1/feed", .failure(URLError(.notConnectedToInternet)))
        // WHEN the screen loads and the feed is asked for offline
        let model = CachedProfileModel(provider: provider)
        await model.load()
        let feed = try await provider.response(Feed())
        // THEN the server's user is shown, and the feed is the day-old stored one
        #expect(model.user == User(id: 1, name: "Kim Lee") && !model.isOutdated && model.message.isEmpty)
        #expect(feed.report.cache == .staleIfError)
        try await describeCache(of: provider)
    }

    @Test func theKeepForOfflineSnippetShowsTheKeptOrdersOffline() async throws {
        // GIVEN orders sent with Spring Security's default headers
        let server = MockServer()
        let clock = ManualClock()
        server.stub(.get, "/v1/orders", .json([User(id: 1, name: "Kim")], headers: ["Cache-Control": "no-cache, no-store, max-age=0, must-revalidate"]))
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)
        #expect(try await !ordersAreOffline(provider: provider))
        // WHEN the device is offline six days later, THEN the kept copy answers, marked stale
        clock.advance(by: 6 * 86_400)
        server.stub(.get, "/v1/orders", .failure(URLError(.notConnectedToInternet)))
        #expect(try await ordersAreOffline(provider: provider))
        // AND a day later it is gone
        clock.advance(by: 86_400)
        await #expect(throws: NetworkError.self) { try await ordersAreOffline(provider: provider) }
    }
}
