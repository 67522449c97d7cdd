import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Endpoints for the stale-while-revalidate tests (RFC 5861 §3). Each key is a document of its own:
/// - `GET /stale/{key}` → `{"key","version"}`, `ETag: "s1"`, `Cache-Control: max-age=60, stale-while-revalidate=600`.
///   A request with `If-None-Match` is a revalidation: counted as it arrives, then held until the key is released,
///   then answered `304` with the same headers.
/// - `POST /stale/{key}/release` → lets every held and later revalidation of the key through, 204.
/// - `GET /stale/{key}/stats` → `{"loads","revalidations"}`: the unconditional requests and the revalidations that
///   arrived so far.
extension TestServer {
    static func addStaleRoutes(to router: Router<BasicRequestContext>) {
        let state = StaleState()
        let headers: HTTPFields = [.eTag: "\"s1\"", .cacheControl: "max-age=60, stale-while-revalidate=600"]

        router.get("/stale/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            guard request.headers[.ifNoneMatch] != nil else {
                await state.countLoad(key)
                var response = json(["key": key, "version": 1])
                response.headers.append(contentsOf: headers)
                return response
            }
            await state.holdRevalidation(key)
            return Response(status: .notModified, headers: headers)
        }
        router.post("/stale/:key/release") { _, context -> Response in
            await state.release(context.parameters.get("key") ?? "")
            return Response(status: .noContent)
        }
        router.get("/stale/:key/stats") { _, context -> Response in
            let (loads, revalidations) = await state.stats(context.parameters.get("key") ?? "")
            var response = json(["loads": loads, "revalidations": revalidations])
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }
}

/// What the stale routes counted, and the revalidations they hold.
actor StaleState {
    private var loads: [String: Int] = [:]
    private var revalidations: [String: Int] = [:]
    private var released: Set<String> = []
    private var held: [String: [CheckedContinuation<Void, Never>]] = [:]

    func countLoad(_ key: String) { loads[key, default: 0] += 1 }

    /// Counts a revalidation of `key` and returns once the key is released.
    func holdRevalidation(_ key: String) async {
        revalidations[key, default: 0] += 1
        guard !released.contains(key) else { return }
        await withCheckedContinuation { held[key, default: []].append($0) }
    }

    func release(_ key: String) {
        released.insert(key)
        for waiter in held.removeValue(forKey: key) ?? [] { waiter.resume() }
    }

    func stats(_ key: String) -> (loads: Int, revalidations: Int) { (loads[key] ?? 0, revalidations[key] ?? 0) }
}
