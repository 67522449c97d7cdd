import Foundation
import Networking
import NetworkingTestSupport
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `/stale/{key}/stats`'s body.
struct StaleStats: Decodable, Equatable, Sendable {
    let loads: Int
    let revalidations: Int
}

/// stale-while-revalidate over real TCP (RFC 5861 §3): the server counts the revalidations it receives.
@Suite("stale-while-revalidate over TCP", .timeLimit(.minutes(1)))
struct StaleWhileRevalidateTests {
    let clock = ManualClock(start: Date())

    @Test("100 concurrent callers of a stale entry are answered at once, and the server receives exactly one background revalidation")
    func oneRevalidationForHundredCallers() async throws {
        try await withServer { server in
            // GIVEN a document fresh for 60 s, servable stale for 600 s more while it is revalidated
            let provider = NetworkProvider(configuration: .ephemeral, cache: MemoryResponseCache(), now: clock.now)
            let document = Call(baseURL: server.baseURL, path: "/stale/hundred", requiresAuthentication: false)
            #expect(try await provider.response(document).report.cache == .miss)
            // WHEN 100 callers ask for it at once, 30 s stale, while the server holds any revalidation
            clock.advance(by: 90)
            let answers = try await withThrowingTaskGroup(of: CacheResult?.self) { group in
                for _ in 0..<100 { group.addTask { try await provider.response(document).report.cache } }
                return try await group.reduce(into: [CacheResult?]()) { $0.append($1) }
            }
            let control = NetworkProvider(configuration: .ephemeral)
            let release = Call(baseURL: server.baseURL, path: "/stale/hundred/release", method: .post, requiresAuthentication: false)
            _ = try await control.response(release)
            await provider.waitForBackgroundRevalidations()
            // THEN every caller got the stored document at once, and the server saw one revalidation
            #expect(answers.count == 100)
            #expect(answers.allSatisfy { $0 == .staleWhileRevalidate })
            let stats = try await control.request(
                Call(baseURL: server.baseURL, path: "/stale/hundred/stats", requiresAuthentication: false), as: StaleStats.self)
            #expect(stats == StaleStats(loads: 1, revalidations: 1))
        }
    }
}
