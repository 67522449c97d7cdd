import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A cached endpoint offline answers from the cache at once instead of waiting, when its policy lets a
/// stored answer stand in for a server that cannot answer (RFC 5861 §4, RFC 9111 §4.2.4).
@Suite("Offline: cached endpoints answer from the cache at once", SuiteTimeLimit.oneMinute)
struct OfflineCacheTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let connectivity = ManualConnectivity()

    /// Stores `/v1/items` (fresh for 60 s), then moves the clock 300 s past its freshness.
    func storeStale(policy: CachePolicy, control: String = "max-age=60") async throws -> NetworkProvider {
        server.stub(.get, "/v1/items", .json(["id": 1], headers: ["Cache-Control": control, "ETag": "\"v1\""]))
        let provider = server.makeProvider(connectivity: connectivity, cache: store, cachePolicy: policy, now: clock.now)
        _ = try await provider.response(OfflineItem())
        clock.advance(by: 360)
        return provider
    }

    @Test(
        "offline, a stale entry that .staleIfError (or .http with stale-if-error) allows answers at once, with no attempt (RFC 5861 §4)",
        arguments: [(CachePolicy.staleIfError(upTo: 3_600), "max-age=60"), (.http, "max-age=60, stale-if-error=3600")])
    func staleIfErrorAnswersAtOnce(_ policy: CachePolicy, _ control: String) async throws {
        let provider = try await storeStale(policy: policy, control: control)
        connectivity.set(online: false)
        let response = try await provider.response(OfflineItem())
        #expect(response.report.cache == .staleIfError)
        #expect(response.report.statusCodes == [])
        #expect(server.requests.count == 1)
        #expect(connectivity.waitingCount == 0)
    }

    @Test("offline, a copy .keepForOffline kept despite no-store answers at once, marked stale, with no attempt and no wait")
    func keptCopyAnswersAtOnce() async throws {
        let provider = try await storeStale(policy: .keepForOffline(upTo: 3_600), control: "no-store")
        connectivity.set(online: false)
        let response = try await provider.response(OfflineItem())
        #expect(response.report.cache == .staleIfError)
        #expect(response.report.statusCodes == [])
        #expect(server.requests.count == 1)
        #expect(connectivity.waitingCount == 0)
    }

    @Test("offline, .cacheElseLoad answers any stored entry at once, with no attempt")
    func cacheElseLoadAnswersAtOnce() async throws {
        let provider = try await storeStale(policy: .cacheElseLoad)
        connectivity.set(online: false)
        let response = try await provider.response(OfflineItem())
        #expect(response.report.statusCodes == [])
        #expect(response.report.cache != nil)
        #expect(server.requests.count == 1)
    }

    @Test("an attempt that fails because the device went offline is answered by the stale entry instead of waiting")
    func failedAttemptAnsweredStale() async throws {
        let provider = try await storeStale(policy: .staleIfError(upTo: 3_600))
        let connectivity = self.connectivity
        server.stub(.get, "/v1/items") { _ in
            connectivity.set(online: false)
            return .failure(URLError(.networkConnectionLost))
        }
        let response = try await provider.response(OfflineItem())
        #expect(response.report.cache == .staleIfError)
        #expect(response.report.statusCodes == [])
        #expect(connectivity.waitingCount == 0)
    }

    @Test("a stale entry no policy lets stand in (RFC 9111 §4.2.4) does not answer: the call waits, then revalidates")
    func staleWithoutAllowanceWaits() async throws {
        let provider = try await storeStale(policy: .http)
        connectivity.set(online: false)
        async let response = provider.response(OfflineItem())
        await pollUntil { [connectivity] in connectivity.waitingCount == 1 }
        connectivity.set(online: true)
        #expect(try await response.report.statusCodes.count == 1)
        #expect(server.requests.count == 2)
    }
}
