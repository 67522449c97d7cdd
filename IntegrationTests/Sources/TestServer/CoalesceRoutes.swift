import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Endpoints for the coalescing tests (issue 33): identical calls counted at the server.
/// - `GET /coalesce/{key}` → `{"key"}`, counted as it arrives, then held until the key is released.
/// - `POST /coalesce/{key}/release` → lets every held and later request of the key through, 204.
/// - `GET /coalesce/{key}/stats` → `{"loads"}`: the requests of the key that arrived so far.
extension TestServer {
    static func addCoalesceRoutes(to router: Router<BasicRequestContext>) {
        let state = CoalesceState()
        router.get("/coalesce/:key") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            await state.hold(key)
            return json(["key": key])
        }
        router.post("/coalesce/:key/release") { _, context -> Response in
            await state.release(context.parameters.get("key") ?? "")
            return Response(status: .noContent)
        }
        router.get("/coalesce/:key/stats") { _, context -> Response in
            var response = json(["loads": await state.loads(context.parameters.get("key") ?? "")])
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }
}

/// What the coalesce routes counted, and the requests they hold.
actor CoalesceState {
    private var counts: [String: Int] = [:]
    private var released: Set<String> = []
    private var held: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// Counts a request of `key` and returns once the key is released.
    func hold(_ key: String) async {
        counts[key, default: 0] += 1
        guard !released.contains(key) else { return }
        await withCheckedContinuation { held[key, default: []].append($0) }
    }

    func release(_ key: String) {
        released.insert(key)
        for waiter in held.removeValue(forKey: key) ?? [] { waiter.resume() }
    }

    func loads(_ key: String) -> Int { counts[key] ?? 0 }
}
