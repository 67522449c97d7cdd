import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Endpoints for the offline tests (the provider's `Connectivity`), counting what they answered:
/// - `GET /offline/ping/{n}` → `{"n"}`, `Cache-Control: no-store`
/// - `GET /offline/doc` → `{"doc"}`, `Cache-Control: max-age=60`: a cached document a test lets go stale
/// - `GET /offline/stats` → `{"pings","docs"}`: how many of each this server answered so far
extension TestServer {
    static func addOfflineRoutes(to router: Router<BasicRequestContext>) {
        let counts = OfflineCounts()
        router.get("/offline/ping/:n") { _, context -> Response in
            await counts.ping()
            var response = json(["n": context.parameters.get("n") ?? ""])
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.get("/offline/doc") { _, _ -> Response in
            await counts.doc()
            var response = json(["doc": "offline"])
            response.headers[.cacheControl] = "max-age=60"
            return response
        }
        router.get("/offline/stats") { _, _ -> Response in
            let (pings, docs) = await counts.read()
            var response = json(["pings": pings, "docs": docs])
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }
}

/// What the offline routes answered.
actor OfflineCounts {
    private var pings = 0
    private var docs = 0

    func ping() { pings += 1 }
    func doc() { docs += 1 }
    func read() -> (pings: Int, docs: Int) { (pings, docs) }
}
