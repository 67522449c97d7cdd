import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stale-while-revalidate answer's background revalidation (RFC 5861 §3) while the device is offline:
/// nobody waits for it, so it does not wait for the network either (it would hold its entry's slot until
/// its deadline); the next stale answer starts another.
@Suite("Offline: background revalidations do not wait for the network", SuiteTimeLimit.oneMinute)
struct OfflineBackgroundRevalidationTests {
    @Test("offline, a stale-while-revalidate answer comes at once and its background revalidation ends without waiting or sending")
    func backgroundRevalidationDoesNotWait() async throws {
        // GIVEN a stored entry, stale but within its stale-while-revalidate window
        let server = MockServer()
        let clock = ManualClock()
        let connectivity = ManualConnectivity()
        server.stub(.get, "/v1/items", .json(["id": 1], headers: ["Cache-Control": "max-age=60, stale-while-revalidate=600", "ETag": "\"v1\""]))
        let provider = server.makeProvider(connectivity: connectivity, cache: MemoryResponseCache(), now: clock.now)
        _ = try await provider.response(OfflineItem())
        clock.advance(by: 90)
        // WHEN the device is offline and the endpoint is called
        connectivity.set(online: false)
        let stale = try await provider.response(OfflineItem())
        // THEN the stale entry answers at once, and the background revalidation ends without waiting or sending
        #expect(stale.report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        #expect(connectivity.waitingCount == 0)
        #expect(server.requests.count == 1)
    }
}
