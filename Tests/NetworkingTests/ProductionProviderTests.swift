import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An app's networking layer as it ships: one factory that takes a session configuration, with every
/// option a provider has. Its tests pass `server.makeConfiguration(basedOn: .default)`; the app passes
/// nothing.
enum ShopNetworking {
    static let baseURL = URL(string: "https://api.shop.example/v1/")!

    /// The pins the app ships: its API and its CDN, which it redirects downloads to.
    static func serverTrust() throws -> ServerTrust {
        try ServerTrust(pinning: [
            .host("api.shop.example", pins: [pinA, pinB]),
            .host("cdn.shop.example", pins: [pinA, pinB]),
        ])
    }

    /// The app's configuration: its own headers, timeouts and cookie policy.
    static func configuration(basedOn configuration: URLSessionConfiguration = .default) -> URLSessionConfiguration {
        var headers = configuration.httpAdditionalHeaders ?? [:]   // added to, not replaced: the test kit's header stays
        headers["X-App-Version"] = "4.2"
        configuration.httpAdditionalHeaders = headers
        configuration.timeoutIntervalForRequest = 15
        configuration.httpShouldSetCookies = false
        return configuration
    }

    /// The provider the app ships.
    static func makeProvider(
        configuration: URLSessionConfiguration = ShopNetworking.configuration(),
        store: any CredentialStore,
        cache: any ResponseCache = MemoryResponseCache(),
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) throws -> NetworkProvider {
        let auth = AuthInterceptor(baseURL: baseURL, store: store) { credential, network in
            let tokens = try await network.request(ShopAPI.refresh(credential.refreshToken), as: ShopTokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, account: credential.account)
        }
        return NetworkProvider(
            configuration: configuration,
            interceptor: Interceptor(interceptors: [auth, RetryPolicy(jitter: 0)]),
            redirectBehavior: .follow,
            cache: cache,
            serverTrust: try serverTrust(),
            monitors: monitors,
            sleep: sleep
        )
    }
}

/// The app's endpoints.
enum ShopAPI: Endpoint {
    case me, feed, download, catalogue
    case refresh(String)

    var baseURL: URL { ShopNetworking.baseURL }
    var path: String {
        switch self {
        case .me: "me"
        case .feed: "feed"
        case .download: "download"
        case .catalogue: "catalogue"
        case .refresh: "auth/refresh"
        }
    }
    var method: HTTPMethod {
        if case .refresh = self { return .post }
        return .get
    }
    var body: RequestBody {
        if case .refresh(let token) = self { return .json(["refreshToken": token]) }
        return .none
    }
}

struct ShopTokens: Codable, Sendable {
    let accessToken: String
    let refreshToken: String
}

/// Records what the monitors are told.
final class ShopMonitor: EventMonitor, @unchecked Sendable {
    // @unchecked: `Recorder` is thread-safe.
    let events = Recorder<String>()
    let sentHeaders = Recorder<[String: String]>()

    func taskDidStart(_ request: URLRequest, context: RequestContext) { sentHeaders.append(request.allHTTPHeaderFields ?? [:]) }
    func requestDidBuild(_ request: URLRequest, context: RequestContext) { sentHeaders.append(request.allHTTPHeaderFields ?? [:]) }
    func requestDidRedirect(_ hop: RedirectHop, context: RequestContext) { events.append("redirect \(hop.statusCode) to \(hop.to)") }
    func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext) { events.append("retry decided") }
    func tokenRefreshDidSucceed(context: RequestContext) { events.append("refreshed") }
    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) { events.append("cache \(result)") }
}

@Suite("The app's production provider, answered by the mock", SuiteTimeLimit.oneMinute)
struct ProductionProviderTests {
    /// The credential of a signed-in user: authenticated answers are cached per account.
    static let signedIn = Credential(accessToken: "access-1", refreshToken: "refresh-1", account: "kim")

    /// The app's provider, made by its own factory from the server's copy of its configuration.
    static func provider(
        _ server: MockServer, credential: Credential = ProductionProviderTests.signedIn,
        monitors: [any EventMonitor] = []
    ) throws -> NetworkProvider {
        try ShopNetworking.makeProvider(
            configuration: server.makeConfiguration(basedOn: ShopNetworking.configuration()),
            store: InMemoryCredentialStore(credential), monitors: monitors, sleep: { _ in })
    }

    @Test func theCopyKeepsTheAppsConfigurationAndLeavesItAsItWas() {
        let server = MockServer()
        let app = ShopNetworking.configuration(basedOn: .ephemeral)
        let copy = server.makeConfiguration(basedOn: app)
        #expect(copy.timeoutIntervalForRequest == 15)
        #expect(copy.httpShouldSetCookies == false)
        #expect(copy.httpAdditionalHeaders?["X-App-Version"] as? String == "4.2")
        #expect(copy.httpAdditionalHeaders?[MockURLProtocol.serverHeader] as? String == server.id)
        #expect(copy.protocolClasses?.first.map(ObjectIdentifier.init) == ObjectIdentifier(MockURLProtocol.self))
        #expect(app.httpAdditionalHeaders?[MockURLProtocol.serverHeader] == nil)   // the app's own is untouched
    }

    @Test func theTokenIsAttachedAndA401RefreshesAndResends() async throws {
        // GIVEN the server rejects the app's old token and refreshes it
        let server = MockServer()
        server.stub(.get, "/v1/me") { request in
            request.header("Authorization") == "Bearer access-2" ? .json(User(id: 1, name: "Kim")) : .status(401)
        }
        server.stub(.post, "/v1/auth/refresh", .json(ShopTokens(accessToken: "access-2", refreshToken: "refresh-2")))
        let monitor = ShopMonitor()
        let provider = try Self.provider(server, monitors: [monitor])

        // WHEN the app's provider asks for the user
        let user = try await provider.request(ShopAPI.me, as: User.self)

        // THEN the old token got a 401, the refresh ran through the same provider, and the call was resent
        #expect(user == User(id: 1, name: "Kim"))
        #expect(server.requests.map(\.path) == ["/v1/me", "/v1/auth/refresh", "/v1/me"])
        #expect(server.requests.map { $0.header("Authorization") } == ["Bearer access-1", nil, "Bearer access-2"])
        #expect(try server.requests[1].decodeBody(as: [String: String].self) == ["refreshToken": "refresh-1"])
        // every request carried the app's own header, and none shows the routing header
        #expect(server.requests.allSatisfy { $0.header("X-App-Version") == "4.2" && $0.header(MockURLProtocol.serverHeader) == nil })
        await provider.waitForMonitors()
        #expect(monitor.events.all.contains("refreshed"))
        #expect(monitor.sentHeaders.all.allSatisfy { headers in !headers.keys.contains { $0.lowercased() == "x-mock-server" } })
    }

    @Test func a503IsRetriedByTheAppsRetryPolicy() async throws {
        // GIVEN a server that is down once (RFC 9110 §15.6.4: 503 is temporary)
        let server = MockServer()
        server.stub(.get, "/v1/feed", .status(503), .json(raw: "[]"))
        let monitor = ShopMonitor()
        let provider = try Self.provider(server, monitors: [monitor])

        // WHEN the app loads its feed
        let response = try await provider.response(ShopAPI.feed)

        // THEN the retry reached the same server
        #expect(response.statusCode == 200)
        #expect(server.requests(.get, "/v1/feed").count == 2)
        await provider.waitForMonitors()
        #expect(monitor.events.all.filter { $0 == "retry decided" }.count == 1)
    }

    @Test func aRedirectToAnotherOriginIsAnsweredByTheSameMock() async throws {
        // GIVEN the API redirects a download to the app's CDN, another origin (RFC 9110 §15.4.3), also pinned
        let server = MockServer()
        server.stub(.get, "/v1/download", .status(302, headers: ["Location": "https://cdn.shop.example/files/7"]))
        server.stub(.get, "/files/7", .json(raw: #"{"file":7}"#))
        let monitor = ShopMonitor()
        let provider = try Self.provider(server, monitors: [monitor])

        // WHEN the app downloads
        let response = try await provider.response(ShopAPI.download)

        // THEN the hop reached the mock (the routing header was kept), without the API's token
        #expect(response.statusCode == 200)
        #expect(server.requests.map(\.url.host) == ["api.shop.example", "cdn.shop.example"])
        #expect(server.requests[1].header("Authorization") == nil)
        #expect(server.requests[1].header(MockURLProtocol.serverHeader) == nil)
        await provider.waitForMonitors()
        #expect(monitor.events.all.contains("redirect 302 to https://cdn.shop.example/files/7"))
    }

    @Test func plainHTTPToAPinnedHostStillFailsAsInProduction() async throws {
        // GIVEN the app's provider answered by the mock, whose pins are not enforced for want of TLS
        let server = MockServer()
        server.stub { _ in .json(raw: "{}") }
        let provider = try Self.provider(server)
        // WHEN a call goes to a pinned host over plain http (an app bug)
        // THEN it fails before it is sent, as it would in production on every platform
        await #expect(throws: NetworkError.unenforceablePins(host: "api.shop.example")) {
            try await provider.response(PlainHTTPEndpoint())
        }
        #expect(server.requests.isEmpty)
    }

    @Test func aFreshCachedAnswerDoesNotReachTheServer() async throws {
        // GIVEN a response fresh for a minute (RFC 9111 §4.2)
        let server = MockServer()
        server.stub(.get, "/v1/catalogue", .json(raw: "[1,2]", headers: ["Cache-Control": "max-age=60"]))
        let monitor = ShopMonitor()
        let provider = try Self.provider(server, monitors: [monitor])

        // WHEN the app asks twice
        _ = try await provider.response(ShopAPI.catalogue)
        let second = try await provider.response(ShopAPI.catalogue)

        // THEN the app's cache answered the second, and neither the answer nor any monitor shows the test kit's header
        #expect(second.data == Data("[1,2]".utf8))
        #expect(server.requests.count == 1)
        #expect(second.request.value(forHTTPHeaderField: MockURLProtocol.serverHeader) == nil)
        await provider.waitForMonitors()
        #expect(monitor.events.all.contains("cache hit"))
        #expect(monitor.sentHeaders.all.count >= 3)   // two built, one started
        #expect(monitor.sentHeaders.all.allSatisfy { $0.keys.allSatisfy { $0.caseInsensitiveCompare(MockURLProtocol.serverHeader) != .orderedSame } })
    }

    @Test func theDiskCacheTheAppShipsWorksToo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ProductionProviderTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/catalogue", .json(raw: "[3]", headers: ["Cache-Control": "max-age=60"]))
        let provider = try ShopNetworking.makeProvider(
            configuration: server.makeConfiguration(basedOn: .ephemeral),
            store: InMemoryCredentialStore(Self.signedIn),
            cache: DiskResponseCache(directory: folder), sleep: { _ in })

        _ = try await provider.response(ShopAPI.catalogue)
        let second = try await provider.response(ShopAPI.catalogue)

        #expect(second.data == Data("[3]".utf8))
        #expect(server.requests.count == 1)
    }

    @Test func thePinsArePresentAndThePinnedHostsAreAnsweredByTheMock() async throws {
        // GIVEN the app's pins, on a platform that cannot check them (Linux) or one that can
        let server = MockServer()
        server.stub(.get, "/v1/me", .json(User(id: 1, name: "Kim")))
        let provider = try Self.provider(server)

        // WHEN the app calls its pinned API through the mock
        let user = try await provider.request(ShopAPI.me, as: User.self)

        // THEN the provider keeps the app's pins, and the call, which never meets TLS, is answered
        #expect(user.id == 1)
        #expect(provider.serverTrust.pinnedHosts.map(\.host) == ["api.shop.example", "cdn.shop.example"])
    }

    @Test func theSamePinsStillFailClosedWhereTheyCannotBeChecked() async throws {
        // GIVEN the same pins, on a provider whose requests are not all routed to the test kit: one made
        // from `makeConfiguration()` whose requests an adapter routes (so one it missed would go out)
        var trust = try ShopNetworking.serverTrust()
        trust.enforcesPins = false   // what Linux does, on every platform
        let server = MockServer()
        server.stub { _ in .json(raw: "{}") }
        let adapted = NetworkProvider(configuration: server.makeConfiguration(), interceptor: ServerRouter(server: server), serverTrust: trust)

        // THEN a call to a pinned host fails before it is sent, as ServerTrust documents
        await #expect(throws: NetworkError.unenforceablePins(host: "api.shop.example")) {
            try await adapted.response(ShopAPI.catalogue)
        }
        #expect(server.requests.isEmpty)
        #if canImport(FoundationNetworking)
            // AND the app's own configuration on Linux, with pins as declared, fails closed too
            let shipped = try ShopNetworking.makeProvider(store: InMemoryCredentialStore(Self.signedIn), sleep: { _ in })
            await #expect(throws: NetworkError.unenforceablePins(host: "api.shop.example")) {
                try await shipped.response(ShopAPI.catalogue)
            }
        #endif
    }

    @Test func parallelTestsEachWithTheirOwnServerDoNotCrossTalk() async throws {
        // GIVEN ten servers, each answering its own name, and the app's provider for each
        let servers = (0..<10).map { index in
            let server = MockServer()
            server.stub(.get, "/v1/me", .json(User(id: index, name: "server \(index)")))
            return server
        }
        let providers = try servers.map { try Self.provider($0) }

        // WHEN all of them call at once
        let users = try await withThrowingTaskGroup(of: (Int, User).self) { group in
            for (index, provider) in providers.enumerated() {
                for _ in 0..<5 { group.addTask { (index, try await provider.request(ShopAPI.me, as: User.self)) } }
            }
            return try await group.reduce(into: [(Int, User)]()) { $0.append($1) }
        }

        // THEN each provider was answered by its own server only
        #expect(users.count == 50)
        #expect(users.allSatisfy { $0.0 == $0.1.id })
        #expect(servers.allSatisfy { (1...5).contains($0.requests.count) })   // identical concurrent GETs may share an exchange
    }
}

/// Twin of the snippet in Docs/Testing.md, "Your production provider under test": keep it identical.
enum ProductionProviderDocSnippet {
    static let auth = AuthInterceptor(baseURL: ShopNetworking.baseURL, store: InMemoryCredentialStore(ProductionProviderTests.signedIn)) {
        credential, _ in credential
    }
    static let logger = ShopMonitor()
    static let currentKeyPin = pinA
    static let backupKeyPin = pinB

    // The app, once:
    static func makeProvider(configuration: URLSessionConfiguration = .default) throws -> NetworkProvider {
        NetworkProvider(
            configuration: configuration,
            interceptor: Interceptor(interceptors: [auth, RetryPolicy()]),
            cache: MemoryResponseCache(),
            serverTrust: try ServerTrust(pinning: [.host("api.shop.example", pins: [currentKeyPin, backupKeyPin])]),
            monitors: [logger])
    }

    static func run() async throws -> (User, MockServer) {
        // Its tests:
        let server = MockServer()
        server.stub(.get, "/v1/me", .json(User(id: 1, name: "Kim")))
        let provider = try makeProvider(configuration: server.makeConfiguration(basedOn: .default))
        let user = try await provider.request(ShopAPI.me, as: User.self)
        return (user, server)
    }
}

@Suite("Docs/Testing.md: the production provider snippet", SuiteTimeLimit.oneMinute)
struct ProductionProviderDocSnippetTests {
    @Test func theSnippetRunsTheAppsFactoryAgainstTheMock() async throws {
        let (user, server) = try await ProductionProviderDocSnippet.run()
        #expect(user == User(id: 1, name: "Kim"))
        #expect(server.requests.first?.header("Authorization") == "Bearer access-1")
    }
}

/// A GET of the app's API over plain http.
private struct PlainHTTPEndpoint: Endpoint {
    var baseURL: URL { URL(string: "http://api.shop.example/v1")! }
    var path: String { "/me" }
}
