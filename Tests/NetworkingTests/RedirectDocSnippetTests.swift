// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Redirects.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct Avatar: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/me/avatar" }
    var redirectBehavior: RedirectBehavior? { .doNotFollow }   // the app reads the 302's Location itself
    var acceptableStatusCodes: Set<Int> { [200, 302] }
}

struct Export: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/exports/latest" }
    var redirectBehavior: RedirectBehavior? {
        .modify { next, _ in next.url?.host == "cdn.example.com" ? next : nil }   // only to our CDN
    }
}

@Suite("Docs/Redirects.md snippets")
struct RedirectDocSnippetTests {
    @Test func theSnippetsBehaveAsThePageSays() async throws {
        // GIVEN an API that sends the avatar and the export elsewhere
        let server = MockServer()
        server.stub { request in
            switch (request.url.host ?? "", request.path) {
            case ("api.example.com", "/me/avatar"): return .status(302, headers: ["Location": "https://img.example.com/a.png"])
            case ("api.example.com", "/exports/latest"): return .status(302, headers: ["Location": "https://cdn.example.com/e.csv"])
            default: return .json(raw: "{}")
            }
        }
        let provider = server.makeProvider()
        // WHEN both are called
        let avatar = try await provider.response(Avatar())
        let export = try await provider.response(Export())
        // THEN the avatar's 302 is the answer, and the export went to the CDN
        #expect(avatar.statusCode == 302 && avatar.value(forHTTPHeaderField: "Location") == "https://img.example.com/a.png")
        #expect(export.httpResponse.url?.host == "cdn.example.com")
        let _ = NetworkProvider(redirectBehavior: .follow, allowsInsecureRedirects: false)
    }
}
