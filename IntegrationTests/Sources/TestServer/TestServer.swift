import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// An auth API like the ones apps talk to, plus fault endpoints, served by Hummingbird on 127.0.0.1
/// with an ephemeral port, and a second listener on another port that plays "a foreign host" and
/// records the headers it receives. Started in-process by the tests; nothing leaves the loopback.
///
/// API (on ``baseURL``):
/// - `POST /auth/sign-in` → `{"accessToken","refreshToken","expiresIn"}`
/// - `POST /auth/refresh` `{"refreshToken"}` → a new pair (the old refresh token is revoked), or 401
/// - `GET /items/{id}` with `Authorization: Bearer <token>` (or `accessToken: <token>`) → `{"id","token"}`, or 401
/// - `POST /admin/expire`, `POST /admin/revoke` → 204
/// - `GET /redirect/same` → 302 to `/echo`; `GET /redirect/cross` → 302 to the foreign listener
/// - `POST /redirect/{303,307,308}-same` → that status to `/echo`; `POST /redirect/{303,307,308}-cross`
///   → that status to the foreign listener's `/landing` (which answers any method and logs the request
///   in full in ``foreign``)
/// - `GET /slow?ms=N`, `GET /flaky/{key}?failures=N` (503 N times), `GET /ratelimited/{key}?after=S`
///   (429 with `Retry-After: S` once), `GET /drop` (closes mid-body), `GET /large?mb=N`, `GET /gzip`
/// - uploads, downloads and Server-Sent Events: see `TransferRoutes.swift`
/// - `GET /resume/{key}`: range requests and dropped connections: see `ResumeRoutes.swift`
/// - `GET /offline/...`: counted answers for the offline tests: see `OfflineRoutes.swift`
/// - `/echo` (any method) → `{"method","path","query","headers","body"}`
public struct TestServer: Sendable {
    /// The API's port.
    public let port: Int
    /// The foreign listener's port.
    public let foreignPort: Int
    /// Token state and counters.
    public let state: AuthState
    /// Every request the foreign listener received, with its method and body.
    public let foreign: ForeignLog
    private let groups: [(ServiceGroup, Task<Void, any Error>)]

    /// The API's base URL, `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The foreign listener's base URL.
    public var foreignURL: URL { URL(string: "http://127.0.0.1:\(foreignPort)")! }

    /// Starts both listeners and returns once they accept connections.
    public static func start() async throws -> TestServer {
        let state = AuthState()
        let log = ForeignLog()
        let (foreignPort, foreign) = try await run(foreignRouter(state: state, log: log))
        let (port, api) = try await run(apiRouter(state: state, foreignPort: foreignPort))
        return TestServer(port: port, foreignPort: foreignPort, state: state, foreign: log, groups: [foreign, api])
    }

    /// Stops both listeners gracefully: requests in flight are answered first.
    public func stop() async {
        for (group, task) in groups {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    private static func run(_ router: Router<BasicRequestContext>) async throws -> (Int, (ServiceGroup, Task<Void, any Error>)) {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "networking-tests"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: quietLogger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
        let task = Task { try await group.run() }
        for await port in ports where port > 0 { return (port, (group, task)) }
        task.cancel()
        throw ServerError.didNotStart
    }

    enum ServerError: Error { case didNotStart }

    /// Hummingbird logs errors of requests the tests break on purpose (drops, timeouts); keep quiet.
    private static var quietLogger: Logger {
        var logger = Logger(label: "TestServer")
        logger.logLevel = .critical
        return logger
    }
}

// MARK: Routes

extension TestServer {
    static func foreignRouter(state: AuthState, log: ForeignLog) -> Router<BasicRequestContext> {
        let router = Router()
        let landing: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            await state.recordForeign(headers(of: request))
            await log.record(
                ForeignLog.Entry(
                    method: request.method.rawValue, path: request.uri.path,
                    headers: headers(of: request), body: Data(buffer: body)))
            return text("foreign")
        }
        router.get("/landing", use: landing)
        router.post("/landing", use: landing)
        router.put("/landing", use: landing)
        // `GET /bounce?to=URL` → 302 back to `to` (another origin bouncing the client home), logged like a landing.
        router.get("/bounce") { request, _ -> Response in
            await log.record(ForeignLog.Entry(method: "GET", path: "/bounce", headers: headers(of: request), body: Data()))
            return redirect(to: request.uri.queryParameters["to"].map(String.init) ?? "/")
        }
        return router
    }

    static func apiRouter(state: AuthState, foreignPort: Int) -> Router<BasicRequestContext> {
        let router = Router()

        router.post("/auth/sign-in") { _, _ -> Response in
            let pair = await state.issue()
            return json(["accessToken": pair.accessToken, "refreshToken": pair.refreshToken, "expiresIn": 60])
        }
        router.post("/auth/refresh") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 16)
            let token = (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["refreshToken"] as? String ?? ""
            guard let pair = await state.refresh(with: token) else {
                return json(["error": "invalid_grant"], status: .unauthorized)
            }
            return json(["accessToken": pair.accessToken, "refreshToken": pair.refreshToken, "expiresIn": 60])
        }
        router.get("/items/:id") { request, context -> Response in
            let sent = bearerToken(of: request)
            guard let sent, await state.isValid(accessToken: sent) else { return Response(status: .unauthorized) }
            return json(["id": context.parameters.get("id") ?? "", "token": sent])
        }
        router.post("/admin/expire") { _, _ -> Response in
            await state.expireAccessTokens()
            return Response(status: .noContent)
        }
        router.post("/admin/revoke") { _, _ -> Response in
            await state.revoke()
            return Response(status: .noContent)
        }

        router.get("/redirect/same") { _, _ in redirect(to: "/echo") }
        router.get("/redirect/cross") { _, _ in redirect(to: "http://127.0.0.1:\(foreignPort)/landing") }
        for code in [303, 307, 308] {
            router.post("/redirect/\(code)-same") { _, _ in redirect(to: "/echo", status: .init(code: code)) }
            router.post("/redirect/\(code)-cross") { _, _ in
                redirect(to: "http://127.0.0.1:\(foreignPort)/landing", status: .init(code: code))
            }
        }

        // `/hop/{code}/same|cross` (GET, POST, PUT): that status to `/echo`, or to the foreign `/landing`;
        // `GET /hop/bounce`: 302 to the foreign listener, which sends the client back to `/echo`;
        // `GET /hop/cookie`: 302 to `/echo` with `Set-Cookie: hop=cookie-1`.
        let hop: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
            var request = request
            _ = try await request.collectBody(upTo: 1 << 22)   // read what was sent before answering
            let code = Int(context.parameters.get("code") ?? "") ?? 302
            let target = context.parameters.get("target") == "cross" ? "http://127.0.0.1:\(foreignPort)/landing" : "/echo"
            return redirect(to: target, status: .init(code: code))
        }
        router.get("/hop/:code/:target", use: hop)
        router.post("/hop/:code/:target", use: hop)
        router.put("/hop/:code/:target", use: hop)
        router.get("/hop/bounce") { request, _ -> Response in
            let home = "http://\(request.head.authority ?? "127.0.0.1")/echo"
            return redirect(to: "http://127.0.0.1:\(foreignPort)/bounce?to=\(home)")
        }
        router.get("/hop/cookie") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/echo", .setCookie: "hop=cookie-1; Path=/"])
        }

        router.get("/slow") { request, _ -> Response in
            let milliseconds = Int(request.uri.queryParameters["ms"].map(String.init) ?? "") ?? 1_000
            try await Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000)
            return text("slow")
        }
        router.get("/flaky/:key") { request, context -> Response in
            let failures = Int(request.uri.queryParameters["failures"].map(String.init) ?? "") ?? 1
            let before = await state.flakyCall(context.parameters.get("key") ?? "")
            return before < failures ? Response(status: .serviceUnavailable) : json(["ok": true])
        }
        router.get("/ratelimited/:key") { request, context -> Response in
            let after = request.uri.queryParameters["after"].map(String.init) ?? "1"
            let before = await state.flakyCall("ratelimited-" + (context.parameters.get("key") ?? ""))
            guard before > 0 else { return Response(status: .tooManyRequests, headers: [.retryAfter: after]) }
            return json(["ok": true])
        }
        router.get("/drop") { _, _ -> Response in
            // Promise a megabyte, send a kilobyte, then fail: the server closes the connection mid-body.
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: 1_000_000) { writer in
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "a"), count: 1_000))
                    throw CancellationError()
                })
        }
        router.get("/large") { request, _ -> Response in
            let megabytes = Int(request.uri.queryParameters["mb"].map(String.init) ?? "") ?? 1
            let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1 << 16)
            let chunks = megabytes * 16
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: chunks << 16) { writer in
                    for _ in 0..<chunks { try await writer.write(chunk) }
                    try await writer.finish(nil)
                })
        }
        router.get("/gzip") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json", .contentEncoding: "gzip"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: GzipFixture.compressed)))
        }

        let echo: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            var query: [String: String] = [:]
            for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
            return json([
                "method": request.method.rawValue,
                "path": request.uri.path,
                "query": query,
                "headers": headers(of: request),
                "body": String(buffer: body),
            ])
        }
        addTransferRoutes(to: router, state: state)
        addCacheRoutes(to: router, state: state)
        addStaleRoutes(to: router)
        addCoalesceRoutes(to: router)
        addResumeRoutes(to: router)
        addOfflineRoutes(to: router)
        router.get("/echo", use: echo)
        router.post("/echo", use: echo)
        router.put("/echo", use: echo)
        router.patch("/echo", use: echo)
        router.delete("/echo", use: echo)
        return router
    }

    static func headers(of request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            result[name] = result[name].map { $0 + ", " + field.value } ?? field.value
        }
        return result
    }

    static func bearerToken(of request: Request) -> String? {
        if let value = request.headers[.authorization], value.hasPrefix("Bearer ") { return String(value.dropFirst(7)) }
        if let name = HTTPField.Name("accessToken") { return request.headers[name] }
        return nil
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func text(_ string: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: string)))
    }

    static func redirect(to location: String, status: HTTPResponse.Status = .found) -> Response {
        Response(status: status, headers: [.location: location])
    }
}
