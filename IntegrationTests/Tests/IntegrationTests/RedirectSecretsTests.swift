import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects over real TCP: what reaches another origin, and what a same-origin redirect keeps.
@Suite("Redirect secrets over TCP", .timeLimit(.minutes(1)))
struct RedirectSecretsTests {
    static let apiKey = "key-secret-\(UUID().uuidString.prefix(8))"
    static let card = "card-secret-\(UUID().uuidString.prefix(8))"
    static var body: RequestBody { .json(["card": card]) }
    static let headers = ["X-Api-Key": apiKey, "X-Trace": "trace-1", "Accept-Language": "de", "Cookie": "session=\(apiKey)"]

    @Test("a 307/308 of a POST to another origin fails with a typed error and sends nothing there", arguments: [307, 308])
    func crossOriginBodyRedirectIsRefused(status: Int) async throws {
        try await withServer { server in
            // GIVEN a signed-in client, and an API that redirects a POST to another origin keeping the body
            let client = LiveClient(server)
            try await client.signIn()
            // WHEN the POST is sent, through the authenticated provider and through a plain one
            for provider in [client.provider, client.plain] {
                await #expect {
                    try await provider.response(client.call("/redirect/\(status)-cross", .post, headers: Self.headers, body: Self.body))
                } throws: { error in
                    guard case NetworkError.redirectWouldForwardBody(let code) = error else { return false }
                    return code == status
                }
            }
            // THEN the foreign listener never saw a request: not the body, not a header
            let received = await server.foreign.entries.count
            #expect(received == 0)
        }
    }

    @Test func aCrossOriginRedirectDropsEveryHeaderButTheSafeOnes() async throws {
        try await withServer { server in
            // GIVEN a signed-in client whose calls carry an API key, a trace id, a cookie and a language
            let client = LiveClient(server)
            try await client.signIn()
            // WHEN a GET is redirected (302) and a POST is redirected (303, followed as a GET) to another origin
            let get = try await client.provider.response(client.call("/redirect/cross", headers: Self.headers))
            let post = try await client.provider.response(client.call("/redirect/303-cross", .post, headers: Self.headers, body: Self.body))
            #expect(get.statusCode == 200 && post.statusCode == 200)
            // THEN the foreign listener got both without the API key, trace, cookie, token, content type or body
            let received = await server.foreign.entries
            #expect(received.map(\.method) == ["GET", "GET"])
            for entry in received {
                for name in ["X-Api-Key", "X-Trace", "Cookie", "Authorization", "Content-Type"] {
                    let leaked = entry.header(name) != nil
                    #expect(!leaked, "\(name) reached another origin")
                }
                let leaksAValue = entry.headers.values.contains { $0.contains(Self.apiKey) || $0.contains("access-") }
                #expect(!leaksAValue)
                #expect(entry.body.isEmpty)
                // while the safe list is kept
                #expect(entry.header("Accept-Language") == "de")
            }
        }
    }

    @Test("a same-origin 307/308 of a POST keeps its method, body and headers", arguments: [307, 308])
    func sameOriginBodyRedirectKeepsWorking(status: Int) async throws {
        try await withServer { server in
            // GIVEN a signed-in client
            let client = LiveClient(server)
            let tokens = try await client.signIn()
            // WHEN a POST is redirected within the API's origin
            let echo = try await client.provider.request(
                client.call("/redirect/\(status)-same", .post, headers: ["X-Api-Key": Self.apiKey], body: Self.body), as: Echo.self)
            // THEN it arrives at the target as a POST with its body, API key and token
            #expect(echo.path == "/echo" && echo.method == "POST")
            let arrived =
                echo.body == #"{"card":"\#(Self.card)"}"#
                && echo.headers.first { $0.key.lowercased() == "x-api-key" }?.value == Self.apiKey
                && echo.headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer \(tokens.accessToken)"
            #expect(arrived)
            let foreign = await server.foreign.entries.count
            #expect(foreign == 0)
        }
    }
}
