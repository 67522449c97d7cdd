import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small seeded generator, so a chaos run can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}

/// Resident memory of this process, in MiB, from /proc/self/status.
func residentMemoryMiB() -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { return nil }
    return kib / 1_024
}

@Suite("Chaos over TCP", .timeLimit(.minutes(10)))
struct ChaosTests {
    enum Outcome: Sendable {
        case success
        case typedFailure(String)
        case untyped(String)
    }

    @Test func tenThousandRequestsWithRandomFaultsAllResolve() async throws {
        try await withServer { server in
            // GIVEN a signed-in client with retries, a 1 s request timeout, and short backoffs (but a
            // maximum delay that honours the rate limiter's Retry-After: 1, which is never cut short)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 1
            // (rotations here are far more frequent than any real server's, so the refresh rate limit is raised)
            let client = LiveClient(
                server, configuration: configuration,
                retriers: [RetryPolicy(exponentialBackoffScale: 0.01, maximumDelay: 1)],
                refreshWindow: RefreshWindow(interval: 30, maximumCount: 1_000))
            try await client.signIn()
            let seed = UInt64(Date().timeIntervalSince1970)
            print("chaos seed: \(seed)")
            var generator = SeededGenerator(seed: seed)
            let plan: [Int] = (0..<10_000).map { _ in Int.random(in: 0..<100, using: &generator) }
            let deadline: TimeInterval = 15
            let concurrency = 48
            var outcomes: [Outcome] = []
            var slowest: TimeInterval = 0
            var memoryAfterWarmUp: Double?

            // WHEN 10,000 requests run, 48 at a time, each drawing a fault
            func run(_ index: Int) async -> (Outcome, TimeInterval) {
                let roll = plan[index]
                let started = Date()
                do {
                    switch roll {
                    case 0..<1:   // token rotation under load
                        try await client.admin("expire")
                        _ = try await client.provider.request(client.call("/items/\(index)"), as: Item.self)
                    case 1..<13:
                        _ = try await client.provider.response(
                            Call(
                                baseURL: server.baseURL, path: "/flaky/\(index)",
                                queryItems: [URLQueryItem(name: "failures", value: "1")]))
                    case 13..<18:
                        _ = try await client.provider.response(
                            Call(
                                baseURL: server.baseURL, path: "/ratelimited/\(index)",
                                queryItems: [URLQueryItem(name: "after", value: "1")]))
                    case 18..<21:
                        _ = try await client.provider.response(client.call("/drop"))
                    case 21..<22:
                        _ = try await client.provider.response(
                            Call(
                                baseURL: server.baseURL, path: "/slow",
                                queryItems: [URLQueryItem(name: "ms", value: "1500")]))
                    case 22..<30:
                        _ = try await client.provider.response(client.call("/redirect/cross", headers: ["Cookie": "session=chaos-cookie"]))
                    default:
                        _ = try await client.provider.request(client.call("/items/\(index)"), as: Item.self)
                    }
                    return (.success, Date().timeIntervalSince(started))
                } catch let error as NetworkError {
                    return (.typedFailure("\(error)"), Date().timeIntervalSince(started))
                } catch {
                    return (.untyped("\(type(of: error)): \(error)"), Date().timeIntervalSince(started))
                }
            }

            await withTaskGroup(of: (Outcome, TimeInterval).self) { group in
                var next = 0
                for _ in 0..<concurrency {
                    group.addTask { [next] in await run(next) }
                    next += 1
                }
                while let (outcome, duration) = await group.next() {
                    outcomes.append(outcome)
                    slowest = max(slowest, duration)
                    if outcomes.count == 2_000 { memoryAfterWarmUp = residentMemoryMiB() }
                    if next < plan.count {
                        group.addTask { [next] in await run(next) }
                        next += 1
                    }
                }
            }
            let memoryAtEnd = residentMemoryMiB()

            // THEN every request resolved, to a success or a typed error, within the deadline
            let successes = outcomes.filter { if case .success = $0 { return true } else { return false } }.count
            let typed = outcomes.compactMap { if case .typedFailure(let text) = $0 { return text } else { return nil } }
            let untyped = outcomes.compactMap { if case .untyped(let text) = $0 { return text } else { return nil } }
            let failureKinds = Dictionary(grouping: typed) { String($0.prefix(60)) }.mapValues(\.count)
            print(
                "chaos: requests=\(outcomes.count) succeeded=\(successes) typed-failures=\(typed.count) untyped=\(untyped.count) slowest=\(String(format: "%.2f", slowest))s refreshes=\(await server.state.refreshCount)"
            )
            for (kind, count) in failureKinds.sorted(by: { $0.value > $1.value }) { print("chaos:   \(count) × \(kind)") }
            print(
                "chaos: resident memory after 2,000 requests \(memoryAfterWarmUp.map { String(format: "%.1f", $0) } ?? "?") MiB, after 10,000 \(memoryAtEnd.map { String(format: "%.1f", $0) } ?? "?") MiB"
            )
            #expect(outcomes.count == 10_000)
            #expect(untyped.isEmpty, "\(untyped.prefix(3))")
            #expect(slowest < deadline)
            #expect(successes > 8_500)
            // and no token or cookie ever reached the foreign listener
            let foreign = await server.state.foreignRequests
            #expect(!foreign.isEmpty)
            #expect(
                foreign.allSatisfy { headers in
                    !headers.keys.contains { ["authorization", "cookie", "accesstoken"].contains($0.lowercased()) }
                        && !headers.values.contains { $0.contains("access-") || $0.contains("chaos-cookie") }
                })
            // and memory stopped growing once warmed up (generous bound: URLSession and the allocator keep pools)
            if let memoryAfterWarmUp, let memoryAtEnd {
                #expect(memoryAtEnd - memoryAfterWarmUp < 96, "resident memory grew from \(memoryAfterWarmUp) to \(memoryAtEnd) MiB")
            }
        }
    }
}
