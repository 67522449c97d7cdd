import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The kinds of body a redirected request can carry.
enum BodyKind: String, CaseIterable, Sendable {
    case none, data, file, multipart

    /// The body, writing its file into `folder` when it needs one.
    func body(in folder: URL) throws -> RequestBody {
        switch self {
        case .none:
            return .none
        case .data:
            return .data(Data("payload-bytes".utf8), contentType: "application/octet-stream")
        case .file:
            let file = folder.appendingPathComponent("upload.bin")
            try Data(repeating: 0x5A, count: 100_000).write(to: file)
            return .file(file, contentType: "application/octet-stream")
        case .multipart:
            let file = folder.appendingPathComponent("photo.jpg")
            try Data(repeating: 0xAB, count: 50_000).write(to: file)
            return .multipart(MultipartForm([.text("title", "Q3"), .file("photo", at: file)]))
        }
    }

    /// The bytes a server must receive for it (for a form: the file part's).
    func expectedBytes(of request: RecordedRequest) throws -> Data {
        switch self {
        case .none: return Data()
        case .data: return Data("payload-bytes".utf8)
        case .file: return Data(repeating: 0x5A, count: 100_000)
        case .multipart:
            let parts = try request.multipartParts()
            return parts.count == 2 && parts[1].data == Data(repeating: 0xAB, count: 50_000) ? Data(repeating: 0xAB, count: 50_000) : Data()
        }
    }

    func received(by request: RecordedRequest) throws -> Data {
        self == .multipart ? try expectedBytes(of: request) : request.body
    }
}

/// An endpoint for redirect tests, with a per-endpoint redirect behaviour.
struct RedirectingEndpoint: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/start"
    var method: HTTPMethod = .post
    var headers: [String: String] = [:]
    var body: RequestBody = .none
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var redirectBehavior: RedirectBehavior?
    var deadline: TimeInterval?
}

/// Records every hop the monitors are told about.
struct HopRecorder: EventMonitor {
    let hops = Recorder<RedirectHop>()
    func requestDidRedirect(_ hop: RedirectHop, context: RequestContext) { hops.append(hop) }
}

@Suite("Redirects through the provider")
struct RedirectTests {
    /// A server that answers `/v1/start` with `status` to `location`, and anything else with 200.
    static func server(status: Int, location: String) -> MockServer {
        let server = MockServer()
        server.stub { request in
            request.url.host == "api.example.com" && request.path == "/v1/start"
                ? .status(status, headers: ["Location": location]) : .json(raw: #"{"at":"\#(request.url.absoluteString)"}"#)
        }
        return server
    }

    @Test(
        "same origin: every status × every body kind arrives as RFC 9110 says",
        arguments: [301, 302, 303, 307, 308], BodyKind.allCases)
    func sameOrigin(status: Int, kind: BodyKind) async throws {
        // GIVEN a POST with a body (none, data, file or form) answered with `status` to the same origin
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = Self.server(status: status, location: "/v1/landing")
        let endpoint = RedirectingEndpoint(body: try kind.body(in: folder))
        // WHEN it is sent
        let response = try await server.makeProvider().response(endpoint)
        // THEN the provider followed it: 307/308 keep POST and the body, 301/302/303 turn it into a bodiless GET
        #expect(response.statusCode == 200)
        let hop = try #require(server.requests.last)
        #expect(hop.path == "/v1/landing")
        let keeps = status == 307 || status == 308
        #expect(hop.method == (keeps ? "POST" : "GET"))
        if keeps {
            let first = try #require(server.requests.first)
            #expect(try kind.received(by: hop) == kind.expectedBytes(of: first))
            #expect(hop.header("Content-Length") == first.header("Content-Length"))
            #expect(hop.header("Content-Type") == first.header("Content-Type"))
        } else {
            #expect(hop.body.isEmpty)
            #expect(hop.header("Content-Length") == nil && hop.header("Content-Type") == nil)
        }
        #expect(response.report.redirects.map(\.statusCode) == [status])
    }

    @Test("another origin: a body is never sent there", arguments: [301, 302, 307, 308], [BodyKind.data, .file, .multipart])
    func crossOriginBody(status: Int, kind: BodyKind) async throws {
        // GIVEN a PUT with a body redirected to another origin (301/302 keep a PUT's body; 307/308 any body)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = Self.server(status: status, location: "https://collector.example.org/x")
        let endpoint = RedirectingEndpoint(method: .put, body: try kind.body(in: folder))
        // WHEN it is sent
        // THEN it fails typed, and the other origin received nothing
        await #expect(throws: NetworkError.redirectWouldForwardBody(statusCode: status)) {
            try await server.makeProvider().response(endpoint)
        }
        #expect(server.requests.allSatisfy { $0.url.host == "api.example.com" })
    }

    @Test("another origin: a hop without a body goes there with only the safe headers", arguments: [301, 302, 303, 307, 308])
    func crossOriginWithoutBody(status: Int) async throws {
        // GIVEN a GET with a token an interceptor added and an endpoint header, redirected to a CDN
        let server = Self.server(status: status, location: "https://cdn.example.net/file")
        let provider = server.makeProvider(interceptor: HeaderAdapter(name: "Authorization", value: "Bearer secret-token"))
        let endpoint = RedirectingEndpoint(method: .get, headers: ["Accept": "application/json", "X-Api-Key": "key-1"])
        // WHEN it is sent
        let response = try await provider.response(endpoint)
        // THEN the CDN answered, without the token or the key, with the Accept header
        #expect(response.statusCode == 200)
        let hop = try #require(server.requests.last)
        #expect(hop.url.host == "cdn.example.net")
        #expect(hop.header("Authorization") == nil && hop.header("X-Api-Key") == nil)
        #expect(hop.header("Accept") == "application/json")
    }

    @Test func theTokenGoesHopByHopOnlyToItsOwnOrigin() async throws {
        // GIVEN the API redirects to a CDN, which redirects back to the API, to another path
        let server = MockServer()
        server.stub { request in
            switch (request.url.host ?? "", request.path) {
            case ("api.example.com", "/v1/start"): return .status(302, headers: ["Location": "https://cdn.example.net/a"])
            case ("cdn.example.net", "/a"): return .status(302, headers: ["Location": "https://api.example.com/v1/back"])
            default: return .json(raw: "{}")
            }
        }
        let api = MockAuthServer(accessTokenIsValid: true)
        let (_, auth) = api.makeAuthenticatedProvider()
        let provider = server.makeProvider(interceptor: auth)
        // WHEN an authenticated call is made
        _ = try await provider.response(RedirectingEndpoint(method: .get))
        // THEN the API got the token on the URL the call asked for only: the CDN never, and the path the
        // CDN chose not either (after a foreign hop only the starting URL gets it again, RFC 9110 §15.4)
        let seen = server.requests.map { ($0.url.host ?? "", $0.header("Authorization")) }
        #expect(seen.map(\.0) == ["api.example.com", "cdn.example.net", "api.example.com"])
        #expect(seen.map(\.1) == ["Bearer access-0", nil, nil])
    }

    @Test func httpsToHttpIsRefusedByDefaultAndAllowedByTheProvider() async throws {
        // GIVEN an https call redirected to http
        let server = Self.server(status: 301, location: "http://api.example.com/v1/plain")
        // WHEN it is sent with the default provider
        // THEN it fails typed, and nothing went over http
        await #expect(throws: NetworkError.insecureRedirect(statusCode: 301)) {
            try await server.makeProvider().response(RedirectingEndpoint(method: .get))
        }
        #expect(server.requests.count == 1)
        // AND a provider that allows it follows
        let allowing = NetworkProvider(configuration: server.makeConfiguration(), interceptor: ServerRouter(server: server), allowsInsecureRedirects: true)
        let response = try await allowing.response(RedirectingEndpoint(method: .get))
        #expect(response.httpResponse.url?.scheme == "http")
    }

    @Test func aRedirectLoopEndsTypedAfterSixteenHops() async throws {
        // GIVEN a server that redirects every request to itself
        let server = MockServer()
        server.stub { request in .status(302, headers: ["Location": request.url.absoluteString]) }
        // WHEN a call is made
        // THEN it ends with httpTooManyRedirects after 1 + 16 requests
        await #expect(throws: NetworkError.transportFailed(URLError(.httpTooManyRedirects))) {
            try await server.makeProvider().response(RedirectingEndpoint(method: .get))
        }
        #expect(server.requests.count == 17)
    }

    @Test func theDeadlineCoversEveryHop() async throws {
        // GIVEN a redirect loop whose hops each take 0.3 s, and a deadline of 1 s
        let server = MockServer()
        server.stub { request in
            var response = MockResponse.status(302, headers: ["Location": request.url.absoluteString])
            response.delay = 0.3
            return response
        }
        // WHEN a call is made
        // THEN the deadline ends it, not the hop limit
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 1)) {
            try await server.makeProvider().response(RedirectingEndpoint(method: .get, deadline: 1))
        }
        #expect(server.requests.count < 17)
    }

    @Test func doNotFollowMakesTheRedirectTheResponse() async throws {
        // GIVEN an endpoint that follows no redirect and accepts 302
        let server = Self.server(status: 302, location: "/v1/landing")
        var endpoint = RedirectingEndpoint(method: .get, redirectBehavior: .doNotFollow)
        // WHEN it is sent without accepting 302, THEN the 302 is validated like any other status
        await #expect(throws: NetworkError.invalidStatusCode(302)) { try await server.makeProvider().response(endpoint) }
        // AND accepting it, the app reads the Location itself
        endpoint.acceptableStatusCodes = [200, 302]
        let response = try await server.makeProvider().response(endpoint)
        #expect(response.statusCode == 302 && response.value(forHTTPHeaderField: "Location") == "/v1/landing")
        #expect(server.requests.count == 2)   // one per call, no hop
    }

    @Test func aProviderDefaultIsOverriddenPerEndpoint() async throws {
        // GIVEN a provider that follows none, and an endpoint that follows
        let server = Self.server(status: 302, location: "/v1/landing")
        let provider = NetworkProvider(configuration: server.makeConfiguration(), interceptor: ServerRouter(server: server), redirectBehavior: .doNotFollow)
        // WHEN each is sent
        await #expect(throws: NetworkError.invalidStatusCode(302)) { try await provider.response(RedirectingEndpoint(method: .get)) }
        let followed = try await provider.response(RedirectingEndpoint(method: .get, redirectBehavior: .follow))
        // THEN the endpoint's choice wins
        #expect(followed.statusCode == 200)
    }

    @Test func aModifierChangesOrStopsTheNextHop() async throws {
        // GIVEN a redirect to a CDN, and modifiers that add a header, or stop at foreign hosts
        let server = Self.server(status: 302, location: "https://cdn.example.net/file")
        let adding = RedirectBehavior.modify { next, response in
            var next = next
            next.setValue("\(response.statusCode)", forHTTPHeaderField: "X-Hop")
            return next
        }
        let stopping = RedirectBehavior.modify { next, _ in next.url?.host == "api.example.com" ? next : nil }
        // WHEN each is used
        _ = try await server.makeProvider().response(RedirectingEndpoint(method: .get, redirectBehavior: adding))
        let stopped = try await server.makeProvider().response(
            RedirectingEndpoint(method: .get, acceptableStatusCodes: [302], redirectBehavior: stopping))
        // THEN the first hop carried the modifier's header; the second call ended at the 302
        #expect(server.requests[1].header("X-Hop") == "302")
        #expect(stopped.statusCode == 302)
        #expect(server.requests.count == 3)
    }

    @Test func monitorsAndTheReportSeeEveryHopWithoutSecrets() async throws {
        // GIVEN two hops, the second to a URL that carries a token in its query and fragment
        let server = MockServer()
        server.stub { request in
            switch request.path {
            case "/v1/start": return .status(301, headers: ["Location": "/v1/middle"])
            case "/v1/middle": return .status(303, headers: ["Location": "https://app.example.org/cb?access_token=leak-1"])
            default: return .json(raw: "{}")
            }
        }
        let recorder = HopRecorder()
        let lines = Recorder<String>()
        let logger = NetworkLogger(sink: LogSink { lines.append($0) })
        let provider = server.makeProvider(monitors: [recorder, logger])
        // WHEN a POST is made
        let response = try await provider.response(RedirectingEndpoint(body: .data(Data("x".utf8), contentType: "text/plain")))
        await provider.waitForMonitors()
        // THEN the monitors saw both hops in order, the report lists them, and no token shows
        #expect(recorder.hops.all.map(\.statusCode) == [301, 303])
        #expect(recorder.hops.all.map(\.method) == ["GET", "GET"])
        #expect(response.report.redirects == recorder.hops.all)
        #expect(recorder.hops.all[1].from == "https://api.example.com/v1/middle")
        let text = lines.all.joined(separator: "\n") + "\(response.report.redirects)"
        #expect(!text.contains("leak-1"))
        #expect(lines.all.contains { $0.hasPrefix("↪ 301 https://api.example.com/v1/start → GET https://api.example.com/v1/middle") })
    }

    @Test func anUploadRedirectedAndAnswered401IsSentWholeAgainAfterOneRefresh() async throws {
        // GIVEN an expired token, and a file upload the API moves with a 307 before checking the token
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let api = MockAuthServer()
        api.mock.stub(.post, "/v1/upload") { _ in .status(307, headers: ["Location": "/v1/upload-here"]) }
        api.mock.stub(.post, "/v1/upload-here") { [weak api] request in
            guard let api, let token = api.currentAccessToken, request.header("Authorization") == "Bearer \(token)" else { return .status(401) }
            return .status(201)
        }
        let (provider, _) = api.makeAuthenticatedProvider()
        let (progress, reporter) = TransferProgress.makeStream()
        let endpoint = RedirectingEndpoint(baseURL: api.baseURL, path: "/upload", body: try BodyKind.file.body(in: folder))
        // WHEN it is uploaded
        let response = try await provider.upload(endpoint, progress: reporter)
        var seen: [TransferProgress] = []
        for await value in progress { seen.append(value) }
        // THEN one refresh, and every hop of both attempts carried the whole file
        #expect(response.statusCode == 201)
        #expect(api.refreshCount == 1)
        let landed = api.mock.requests(.post, "/v1/upload-here")
        #expect(landed.count == 2)
        #expect(landed.allSatisfy { $0.body == Data(repeating: 0x5A, count: 100_000) })
        #expect(response.report.redirects.map(\.attempt) == [1, 2])
        // AND progress counts every hop of every attempt as a new start, and ends complete
        #expect(seen.last?.completedBytes == 100_000)
        #expect(seen.last?.attempt == 4)
    }

    @Test func fiveHundredRedirectedCallsWithAnExpiredTokenShareOneRefresh() async throws {
        // GIVEN an expired token, and an API that moves every POST with a 307 before checking the token
        let api = MockAuthServer()
        api.mock.stub(.post, "/v1/items") { _ in .status(307, headers: ["Location": "/v1/items-here"]) }
        api.mock.stub(.post, "/v1/items-here") { [weak api] request in
            guard let api, let token = api.currentAccessToken, request.header("Authorization") == "Bearer \(token)" else { return .status(401) }
            return request.body == Data("item".utf8) ? .status(201) : .status(400)
        }
        let (provider, _) = api.makeAuthenticatedProvider()
        let endpoint = RedirectingEndpoint(baseURL: api.baseURL, path: "/items", body: .data(Data("item".utf8), contentType: "text/plain"))
        // WHEN 500 calls are made at once
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<500 { group.addTask { try await provider.response(endpoint).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // THEN every call followed its redirect with its body, and one refresh served them all
        #expect(statuses.count == 500 && statuses.allSatisfy { $0 == 201 })
        #expect(api.refreshCount == 1)
    }

    @Test func aDownloadAndAStreamFollowTheirRedirects() async throws {
        // GIVEN a file and an event stream that both moved
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub { request in
            switch request.path {
            case "/v1/start": return .status(302, headers: ["Location": "https://cdn.example.net/blob"])
            case "/blob": return MockResponse(statusCode: 200, body: Data("the file".utf8))
            default: return .status(404)
            }
        }
        let destination = folder.appendingPathComponent("blob.bin")
        // WHEN it is downloaded and streamed
        _ = try await server.makeProvider().download(RedirectingEndpoint(method: .get), to: destination)
        let stream = try await server.makeProvider().stream(RedirectingEndpoint(method: .get))
        var streamed = Data()
        for try await chunk in stream { streamed.append(chunk) }
        // THEN both hold the final body, and the redirect's body went nowhere
        #expect(try Data(contentsOf: destination) == Data("the file".utf8))
        #expect(streamed == Data("the file".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["blob.bin"])
    }

    @Test func cancellingDuringAHopStopsTheCall() async throws {
        // GIVEN a redirect whose target never answers
        let server = MockServer()
        let arrived = Signal()
        server.stub { request in
            guard request.path == "/v1/start" else {
                arrived.fire()
                try await Task.sleep(nanoseconds: 60_000_000_000)
                return .status(200)
            }
            return .status(302, headers: ["Location": "/v1/slow"])
        }
        let provider = server.makeProvider()
        // WHEN the call is cancelled once the hop arrived
        let call = Task { try await provider.response(RedirectingEndpoint(method: .get)) }
        await arrived.wait()
        call.cancel()
        // THEN it ends as cancelled
        await #expect(throws: NetworkError.cancelled) { try await call.value }
    }

    @Test func aFormsOwnContentTypeWinsOverTheEndpoints() async throws {
        // GIVEN endpoints that set `multipart/form-data` without a boundary, with an in-memory form and a spooled one
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.post, "/v1/start", .status(204))
        let headers = ["Content-Type": "multipart/form-data"]
        let inMemory = RedirectingEndpoint(headers: headers, body: .multipart(MultipartForm([.text("a", "1")])))
        let spooled = RedirectingEndpoint(headers: headers, body: try BodyKind.multipart.body(in: folder))
        // WHEN both are sent
        _ = try await server.makeProvider().response(inMemory)
        _ = try await server.makeProvider().response(spooled)
        // THEN both carried the boundary, and the server can read both forms
        for request in server.requests {
            #expect(request.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
            #expect(try !request.multipartParts().isEmpty)
        }
    }
}

/// Routes a plain provider's requests to a mock server (what `makeProvider` does), for providers made
/// with other options.
struct ServerRouter: RequestInterceptor {
    let server: MockServer
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest { server.route(request) }
}
