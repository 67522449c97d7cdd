import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Echo {
    /// A header the echo saw, by name in any case.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Every redirect status × every kind of body × same or other origin, over real TCP: what arrives
/// where. (https → http needs a TLS listener, which Linux URLSession cannot be told to trust here; it is
/// proven through the mock in the unit tests.)
@Suite("Redirect matrix over TCP")
struct RedirectMatrixTests {
    enum Kind: CaseIterable { case none, data, file, multipart }

    static let text = String(repeating: "0123456789", count: 20_000)   // 200 KB, readable in the echo
    static let partText = String(repeating: "abcdefghij", count: 5_000)

    /// The body of `kind`, its file written into `folder`.
    static func body(_ kind: Kind, in folder: URL) throws -> RequestBody {
        switch kind {
        case .none:
            return .none
        case .data:
            return .data(Data("payload-data".utf8), contentType: "text/plain")
        case .file:
            let file = folder.appendingPathComponent("upload.txt")
            try Data(text.utf8).write(to: file)
            return .file(file, contentType: "text/plain")
        case .multipart:
            let file = folder.appendingPathComponent("part.txt")
            try Data(partText.utf8).write(to: file)
            return .multipart(MultipartForm([.text("title", "Q3"), .file("doc", at: file)]))
        }
    }

    /// Whether the echo shows the whole body of `kind`.
    static func arrived(_ kind: Kind, in echo: Echo) -> Bool {
        switch kind {
        case .none: return echo.body.isEmpty
        case .data: return echo.body == "payload-data"
        case .file: return echo.body == text
        case .multipart:
            return echo.body.contains(partText) && echo.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true
        }
    }

    @Test func sameOriginHopsKeepOrDropTheBodyAsRFC9110Says() async throws {
        try await withServer { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("redirect-matrix-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // GIVEN a signed-in client
            let client = LiveClient(server)
            let tokens = try await client.signIn()
            for code in [301, 302, 303, 307, 308] {
                for kind in Kind.allCases {
                    for method in [HTTPMethod.post, .put] {
                        // WHEN a POST or PUT with that body is redirected with `code` within the API's origin
                        let call = client.call("/hop/\(code)/same", method, body: try Self.body(kind, in: folder))
                        let echo = try await client.provider.request(call, as: Echo.self)
                        // THEN 307/308 (and 301/302 of a PUT) keep method, body and token; the rest is a bodiless GET
                        let keeps = code == 307 || code == 308 || (method == .put && code != 303)
                        let label = "\(code) \(method.rawValue) \(kind)"
                        #expect(echo.path == "/echo", "\(label)")
                        #expect(echo.method == (keeps ? method.rawValue : "GET"), "\(label)")
                        let arrived = Self.arrived(keeps ? kind : .none, in: echo)   // a Bool: a failure does not print 200 KB
                        #expect(arrived, "\(label)")
                        #expect(echo.header("Authorization") == "Bearer \(tokens.accessToken)", "\(label)")
                        if !keeps {
                            #expect(echo.header("Content-Type") == nil && (echo.header("Content-Length") ?? "0") == "0", "\(label)")
                        }
                    }
                }
            }
            let foreign = await server.foreign.entries.count
            #expect(foreign == 0)
        }
    }

    @Test func crossOriginHopsNeverCarryABodyOrAToken() async throws {
        try await withServer { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("redirect-matrix-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // GIVEN a signed-in client
            let client = LiveClient(server)
            try await client.signIn()
            var expected: [(method: String, body: Bool)] = []
            for code in [301, 302, 303, 307, 308] {
                for kind in Kind.allCases {
                    // WHEN a POST with that body is redirected with `code` to another origin
                    let call = client.call("/hop/\(code)/cross", .post, headers: ["X-Api-Key": "key-1"], body: try Self.body(kind, in: folder))
                    let keeps = code == 307 || code == 308
                    if keeps && kind != .none {
                        // THEN a hop that would carry the body is refused, typed
                        await #expect(throws: NetworkError.redirectWouldForwardBody(statusCode: code)) {
                            try await client.provider.response(call)
                        }
                    } else {
                        // THEN the others are followed, as a bodiless GET (or a bodiless POST for 307/308)
                        let response = try await client.provider.response(call)
                        #expect(response.statusCode == 200)
                        expected.append((keeps ? "POST" : "GET", false))
                    }
                }
            }
            // AND the other origin got exactly those, without body, token, key or content type
            let entries = await server.foreign.entries
            #expect(entries.map(\.method) == expected.map(\.method))
            for entry in entries {
                #expect(entry.body.isEmpty)
                #expect(entry.header("Authorization") == nil && entry.header("X-Api-Key") == nil && entry.header("Content-Type") == nil)
            }
        }
    }

    @Test func theTokenDoesNotComeBackWhenAnotherOriginSendsTheClientToAnotherAPIPath() async throws {
        try await withServer { server in
            // GIVEN a signed-in client, and an API that sends it to another origin which sends it back to
            // another path of the API (`/echo`, not the `/hop/bounce` the call asked for)
            let client = LiveClient(server)
            _ = try await client.signIn()
            // WHEN the call is made
            let echo = try await client.provider.request(client.call("/hop/bounce"), as: Echo.self)
            // THEN neither the other origin nor the path it chose got the token: after a hop to another
            // origin, only the URL the call started from gets it again (RFC 9110 §15.4, Docs/Redirects.md)
            let bounce = await server.foreign.entries
            #expect(bounce.map(\.path) == ["/bounce"])
            #expect(bounce.first?.header("Authorization") == nil)
            #expect(echo.header("Authorization") == nil)
        }
    }

    @Test func aCookieARedirectSetsIsSentOnTheNextHop() async throws {
        try await withServer { server in
            // GIVEN a session that handles cookies, and an API that sets one on its redirect
            let configuration = URLSessionConfiguration.ephemeral
            let provider = NetworkProvider(configuration: configuration)
            // WHEN the call is made
            let echo = try await provider.request(Call(baseURL: server.baseURL, path: "/hop/cookie", requiresAuthentication: false), as: Echo.self)
            // THEN the next hop carried it
            #expect(echo.header("Cookie") == "hop=cookie-1")
            // AND a session that does not send cookies does not
            configuration.httpShouldSetCookies = false
            let noCookies = NetworkProvider(configuration: configuration)
            let plain = try await noCookies.request(Call(baseURL: server.baseURL, path: "/hop/cookie", requiresAuthentication: false), as: Echo.self)
            #expect(plain.header("Cookie") == nil)
        }
    }
}
