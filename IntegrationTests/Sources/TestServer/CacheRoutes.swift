import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Endpoints for the response cache's tests. Each counts what it answered, by path and status:
/// `GET /cache/stats` → `{"<path>": {"<status>": count}}`, e.g. `{"/cache/etag/a": {"200": 1, "304": 2}}`.
/// - `GET /cache/etag/{key}` → `{"key","version"}`, `ETag: "v<version>"`, `Cache-Control: max-age=60`; a 304 to a
///   matching `If-None-Match`. `POST`, `PUT`, `DELETE` of the same path → the version moves on, 204.
/// - `GET /cache/modified/{key}` → `{"key"}`, a fixed `Last-Modified`, `max-age=60`; a 304 to that `If-Modified-Since`
/// - `GET /cache/plain/{key}` → `{"key","served"}` (how many 200s this path gave so far), `max-age=60`, no validator
/// - `GET /cache/greeting` → the greeting of `Accept-Language` (`en`, `fr`, `de`), `Vary: Accept-Language`, `max-age=60`
/// - `GET /cache/no-store` → `{"served"}` with `Cache-Control: no-store, max-age=600` and an `ETag`
/// - `GET /cache/merge` → 200 with `ETag: "m"`, `max-age=60`, `X-Revision: 1`; its 304s carry `X-Revision: <request
///   count>` and `Cache-Control: max-age=600`
/// - `GET /cache/flaky` → 200 with `max-age=60` the first time, 503 after
/// - `GET /cache/private/{key}` with a token ``AuthState`` takes → `{"key"}`, `ETag: "p"`, `private, max-age=60`; else 401
/// - `POST /cache/sign-in` `{"account"}` → a token pair for that account (never expires);
///   `GET /cache/me` → `{"account","version"}` of the bearer token's account (`private, max-age=600`), or 401;
///   `PUT /cache/me` → that account's version moves on, 204
extension TestServer {
    static func addCacheRoutes(to router: Router<BasicRequestContext>, state: AuthState) {
        let cache = CacheState()
        let maxAge60: HTTPFields = [.cacheControl: "max-age=60"]

        router.get("/cache/stats") { _, _ -> Response in
            var response = json(await cache.stats)
            response.headers[.cacheControl] = "no-store"
            return response
        }

        router.get("/cache/etag/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let version = await cache.version(of: key)
            let headers: HTTPFields = [.eTag: "\"v\(version)\"", .cacheControl: "max-age=60"]
            if matches(request.headers[.ifNoneMatch], "\"v\(version)\"") {
                return await cache.counted(request, Response(status: .notModified, headers: headers))
            }
            return await cache.counted(request, json(["key": key, "version": version], headers: headers))
        }
        let change: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
            await cache.bump(context.parameters.get("key") ?? "")
            return await cache.counted(request, Response(status: .noContent))
        }
        router.post("/cache/etag/:key", use: change)
        router.put("/cache/etag/:key", use: change)
        router.delete("/cache/etag/:key", use: change)

        router.get("/cache/modified/:key") { request, context -> Response in
            let modified = "Wed, 21 Oct 2015 07:28:00 GMT"
            let headers: HTTPFields = [.lastModified: modified, .cacheControl: "max-age=60"]
            if request.headers[.ifModifiedSince] == modified {
                return await cache.counted(request, Response(status: .notModified, headers: headers))
            }
            return await cache.counted(request, json(["key": context.parameters.get("key") ?? ""], headers: headers))
        }

        router.get("/cache/plain/:key") { request, context -> Response in
            let served = await cache.count(request.uri.path, 200) + 1
            return await cache.counted(request, json(["key": context.parameters.get("key") ?? "", "served": served], headers: maxAge60))
        }

        router.get("/cache/greeting") { request, _ -> Response in
            let greetings = ["en": "hello", "fr": "bonjour", "de": "hallo"]
            let language = request.headers[.acceptLanguage] ?? ""
            let headers: HTTPFields = [.vary: "Accept-Language", .cacheControl: "max-age=60"]
            return await cache.counted(request, json(["greeting": greetings[language] ?? "?"], headers: headers))
        }

        router.get("/cache/no-store") { request, _ -> Response in
            let served = await cache.count(request.uri.path, 200) + 1
            let headers: HTTPFields = [.cacheControl: "no-store, max-age=600", .eTag: "\"n\""]
            return await cache.counted(request, json(["served": served], headers: headers))
        }

        router.get("/cache/merge") { request, _ -> Response in
            let requests = await cache.total(request.uri.path) + 1
            guard matches(request.headers[.ifNoneMatch], "\"m\"") else {
                let headers: HTTPFields = [.eTag: "\"m\"", .cacheControl: "max-age=60", xRevision: "1"]
                return await cache.counted(request, json(["name": "Kim"], headers: headers))
            }
            let headers: HTTPFields = [.eTag: "\"m\"", .cacheControl: "max-age=600", xRevision: "\(requests)"]
            return await cache.counted(request, Response(status: .notModified, headers: headers))
        }

        router.get("/cache/flaky") { request, _ -> Response in
            guard await cache.total(request.uri.path) == 0 else { return await cache.counted(request, Response(status: .serviceUnavailable)) }
            return await cache.counted(request, json(["name": "Kim"], headers: maxAge60))
        }

        router.get("/cache/private/:key") { request, context -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else {
                return await cache.counted(request, Response(status: .unauthorized))
            }
            let headers: HTTPFields = [.eTag: "\"p\"", .cacheControl: "private, max-age=60"]
            if matches(request.headers[.ifNoneMatch], "\"p\"") {
                return await cache.counted(request, Response(status: .notModified, headers: headers))
            }
            return await cache.counted(request, json(["key": context.parameters.get("key") ?? ""], headers: headers))
        }

        router.post("/cache/sign-in") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 16)
            let account = (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["account"] as? String ?? ""
            let token = await cache.signIn(account)
            return json(["accessToken": token, "refreshToken": "refresh-" + token, "expiresIn": 3_600])
        }
        router.get("/cache/me") { request, _ -> Response in
            guard let token = bearerToken(of: request), let account = await cache.account(of: token) else {
                return await cache.counted(request, Response(status: .unauthorized))
            }
            let version = await cache.version(of: "me-" + account)
            let headers: HTTPFields = [.cacheControl: "private, max-age=600", .eTag: "\"\(account)-\(version)\""]
            return await cache.counted(request, json(["account": account, "version": version], headers: headers))
        }
        router.put("/cache/me") { request, _ -> Response in
            guard let token = bearerToken(of: request), let account = await cache.account(of: token) else {
                return await cache.counted(request, Response(status: .unauthorized))
            }
            await cache.bump("me-" + account)
            return await cache.counted(request, Response(status: .noContent))
        }
    }

    private static let xRevision = HTTPField.Name("X-Revision")!

    /// Whether an `If-None-Match` value names `etag` (or is `*`), by the weak comparison.
    private static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }

    private static func json(_ object: [String: Any], headers: HTTPFields) -> Response {
        var response = json(object)
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// What the cache routes answered, their resources' versions and the accounts they signed in.
actor CacheState {
    private var counts: [String: [Int: Int]] = [:]
    private var versions: [String: Int] = [:]
    private var accounts: [String: String] = [:]

    /// `response`, counted under `request`'s path and the response's status.
    func counted(_ request: Request, _ response: Response) -> Response {
        counts[request.uri.path, default: [:]][response.status.code, default: 0] += 1
        return response
    }

    func count(_ path: String, _ status: Int) -> Int { counts[path]?[status] ?? 0 }
    func total(_ path: String) -> Int { counts[path]?.values.reduce(0, +) ?? 0 }

    /// The counts by path, then by status (as text, for JSON).
    var stats: [String: [String: Int]] {
        counts.mapValues { byStatus in Dictionary(uniqueKeysWithValues: byStatus.map { ("\($0.key)", $0.value) }) }
    }

    func version(of key: String) -> Int { versions[key] ?? 1 }
    func bump(_ key: String) { versions[key] = version(of: key) + 1 }

    /// A new token for `account`.
    func signIn(_ account: String) -> String {
        let token = "\(account)-token-\(UUID().uuidString.prefix(8))"
        accounts[token] = account
        return token
    }

    func account(of token: String) -> String? { accounts[token] }
}
