// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Testing.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// The page's types.

struct Player: Codable, Equatable {
    let id: Int
    let name: String
}

struct NewPlayer: Codable, Equatable {
    let name: String
}

struct LastSeen: Codable {
    let at: Date
}

enum PlayerAPI: Endpoint {
    case player(id: Int)
    case create(NewPlayer)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String {
        switch self {
        case .player(let id): return "/players/\(id)"
        case .create: return "/players"
        }
    }
    var method: HTTPMethod {
        switch self {
        case .player: return .get
        case .create: return .post
        }
    }
    var body: RequestBody {
        switch self {
        case .player: return .none
        case .create(let player): return .json(player)
        }
    }
}

struct AppEnvelope<Payload: Codable>: Codable {
    let status: Int
    let data: Payload
}
struct AppTokens: Codable {
    let accessToken: String
    let refreshToken: String
}
struct AppRefresh: Endpoint {                                           // the app's own refresh call
    let refreshToken: String
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/auth/refresh" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["refreshToken": refreshToken]) }
}

func appInterceptor(store: any CredentialStore) -> AuthInterceptor {    // as the app builds it
    AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1/")!, store: store) { credential, network in
        let answer = try await network.request(AppRefresh(refreshToken: credential.refreshToken), as: AppEnvelope<AppTokens>.self)
        return Credential(accessToken: answer.data.accessToken, refreshToken: answer.data.refreshToken)
    }
}

struct PlayerRepository {
    let network: any NetworkProviding

    func player(id: Int) async throws -> Player {
        try await network.request(PlayerAPI.player(id: id), as: Player.self)
    }
}

@Test func theRepositoryReadsAPlayer() async throws {
    let server = MockServer()
    server.stub(.get, "/v1/players/7", .json(Player(id: 7, name: "Kim")))
    let repository = PlayerRepository(network: server.makeProvider())
    #expect(try await repository.player(id: 7) == Player(id: 7, name: "Kim"))
}

@Suite("Testing doc snippets", SuiteTimeLimit.oneMinute)
struct TestingDocSnippetTests {
    @Test func theMockServerSection() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/players/7", .json(Player(id: 7, name: "Kim")))
        server.stub(.get, "/v1/players/8", .json(raw: #"{"id":8,"name":"Lee"}"#, headers: ["ETag": #""v2""#]))
        server.stub(.put, "/v1/players/7", .status(503), .status(503), .status(204))   // in turn; the last repeats
        server.stub(.get, "/v1/offline", .failure(URLError(.notConnectedToInternet)))   // no HTTP response at all
        server.stub(.post, "/v1/players") { request in                                  // a closure sees the request
            let new = try request.decodeBody(as: NewPlayer.self)
            return .json(Player(id: 9, name: new.name), statusCode: 201)
        }
        server.stub { _ in .status(418) }                                               // anything else

        let provider = server.makeProvider()
        let player = try await provider.request(PlayerAPI.player(id: 7), as: Player.self)

        #expect(player == Player(id: 7, name: "Kim"))
        let lee = try await provider.response(PlayerAPI.player(id: 8))
        #expect(lee.httpResponse.value(forHTTPHeaderField: "ETag") == #""v2""#)
        #expect(try await provider.request(PlayerAPI.create(NewPlayer(name: "Ana")), as: Player.self) == Player(id: 9, name: "Ana"))
        await #expect(throws: NetworkError.invalidStatusCode(418)) { try await provider.response(TestEndpoint(path: "/other")) }

        let iso8601 = JSONEncoder()
        iso8601.dateEncodingStrategy = .iso8601
        server.stub(.get, "/v1/players/7/last-seen", .json(LastSeen(at: Date(timeIntervalSince1970: 0)), encoder: iso8601))

        let lastSeen = try await provider.response(TestEndpoint(path: "/players/7/last-seen"))
        #expect(String(decoding: lastSeen.data, as: UTF8.self) == #"{"at":"1970-01-01T00:00:00Z"}"#)
    }

    @Test func theTimeoutSection() async throws {
        let server = MockServer()
        let provider = server.makeProvider(deadline: 20)
        var printed = ""
        func print(_ text: String) { printed = text }

        server.stub(.get, "/v1/slow", MockResponse.json(Player(id: 7, name: "Kim")).delayed(by: 0.2))
        server.stub(.get, "/v1/never", MockResponse.status(200).delayed(by: .infinity))

        struct NeverAnswered: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/never" }
            var timeout: TimeInterval? { 1 }
        }
        do {
            _ = try await provider.response(NeverAnswered())
        } catch NetworkError.transportFailed(let error) where error.code == .timedOut {
            print("timed out")                   // after about a second, as against a real server
        }

        // The endpoint's 1 s timeout ended it: the session's (60 s) would have met the deadline (20 s) first.
        #expect(printed == "timed out")
        #expect(try await provider.request(TestEndpoint(path: "/slow"), as: Player.self) == Player(id: 7, name: "Kim"))
    }

    @Test func theChunkedSection() async throws {
        let server = MockServer()
        let provider = server.makeProvider()

        server.stub(.get, "/v1/events", .chunked(["data: one\n\n", "data: two\n\n"], interval: 0.05, headers: ["Content-Type": "text/event-stream"]))
        server.stub(.get, "/v1/export", .chunked([Data(count: 1_024), Data(count: 1_024)], failingWith: URLError(.networkConnectionLost)))

        let events = try await provider.response(TestEndpoint(path: "/events"))
        #expect(String(decoding: events.data, as: UTF8.self) == "data: one\n\ndata: two\n\n")
        await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
            try await provider.response(TestEndpoint(path: "/export"))
        }
    }

    @Test func theRecordingsSection() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/players", .json(Player(id: 9, name: "Ana"), statusCode: 201))
        let provider = server.makeProvider()

        _ = try await provider.response(PlayerAPI.create(NewPlayer(name: "Ana")))
        let sent = server.requests(.post, "/v1/players")
        #expect(sent.count == 1)
        #expect(try sent[0].decodeBody(as: NewPlayer.self) == NewPlayer(name: "Ana"))
        #expect(sent[0].header("content-type") == "application/json")
    }

    @Test func theAwaitingSection() async throws {
        let server = MockServer()
        let provider = server.makeProvider()

        server.stub(.get, "/v1/players/3", MockResponse.status(200).delayed(by: .infinity))
        let call = Task { try await provider.request(PlayerAPI.player(id: 3), as: Player.self) }
        _ = try await server.nextRequest(matching: .get, "/v1/players/3")    // it arrived: no sleep needed
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(await server.waitForInterruptions(1))                        // and the server saw it stopped
    }

    @Test func theAuthServerSection() async throws {
        let api = MockAuthServer()
        let provider = api.makeAuthenticatedProvider().provider
        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)
        #expect(resource.token == "access-1")                // refreshed once, then sent again with the new token
        #expect(api.refreshCount == 1)
    }

    @Test func theEnvelopeSection() async throws {
        let api = MockAuthServer()
        api.setTokensResponse { tokens in .json(AppEnvelope(status: 200, data: tokens)) }
        let provider = api.mock.makeProvider(interceptor: appInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential)))
        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)
        #expect(resource.token == "access-1")

        #expect(api.refreshCount == 1)
        let refresh = try #require(api.mock.requests(.post, "/v1/auth/refresh").first)
        #expect(try refresh.decodeBody(as: [String: String].self) == ["refreshToken": "refresh-0"])
    }
}
