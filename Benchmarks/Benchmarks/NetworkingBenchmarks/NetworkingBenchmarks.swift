import Benchmark
import Foundation
import Networking
import NetworkingTestSupport
import SharedFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Every benchmark goes through NetworkingTestSupport's MockURLProtocol: no sockets, so what is measured
// is URLSession plus what sits on top of it. `bash Benchmarks/compare.sh` runs them all in one process
// and prints the ratios; Docs/Performance.md explains each one and records the figures.
//
// BENCHMARK_SMOKE=1 (used by Benchmarks/ci-smoke.sh) runs every benchmark for at most two iterations
// with no warm-up, so CI checks that they build and pass their own checks without timing anything.

/// Smoke mode: as few iterations as still runs every code path.
let isSmoke = ProcessInfo.processInfo.environment["BENCHMARK_SMOKE"].map { !$0.isEmpty && $0 != "0" } ?? false

/// Requests (or builds) one iteration performed; compare.sh divides per-iteration figures by it.
let requestsMetric = BenchmarkMetric.custom("requests per iteration", polarity: .prefersLarger, useScalingFactor: false)
/// Token refreshes the refresh server saw during one storm iteration (must be 1 with an expired token).
let refreshesMetric = BenchmarkMetric.custom("refreshes", polarity: .prefersSmaller, useScalingFactor: false)
/// Requests the mock API answered 401 during one storm iteration (0 when the expiry is known).
let unauthorizedMetric = BenchmarkMetric.custom("unauthorized", polarity: .prefersSmaller, useScalingFactor: false)

/// Requests per iteration in the sequential benchmarks.
let sequentialCount = 100
/// Concurrent tasks (one request each) per iteration in the concurrent benchmarks.
let concurrentCount = 64
/// Builds per iteration in the request-building benchmark.
let buildCount = 1_000

func configuration(seconds: Int, extraMetrics: [BenchmarkMetric] = []) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .mallocBytesCount, .peakMemoryResident, requestsMetric] + extraMetrics,
        timeUnits: .microseconds,
        warmupIterations: isSmoke ? 0 : 5,
        maxDuration: isSmoke ? .milliseconds(100) : .seconds(seconds),
        maxIterations: isSmoke ? 2 : 1_000_000
    )
}

let benchmarks: @Sendable () -> Void = {
    registerRequestBenchmarks()
    registerBuildBenchmark()
    registerStormBenchmarks()
    registerOutboxBenchmarks()
}

// MARK: - Raw URLSession against the provider

/// The same GET + decode, sent by raw `URLSession.data(for:)` + `JSONDecoder` and by `NetworkProvider`,
/// one after another and from 64 concurrent tasks. Each benchmark keeps one session (or provider) for all
/// of its iterations, as an app does.
func registerRequestBenchmarks() {
    Benchmark(
        "sequential-raw",
        configuration: configuration(seconds: 10),
        closure: { benchmark, client in
            for _ in 0..<sequentialCount {
                blackHole(try await client.user())
            }
            benchmark.stopMeasurement()
            benchmark.measurement(requestsMetric, sequentialCount)
        },
        setup: { RawClient(server: Fixture.userServer()) }
    )

    Benchmark(
        "sequential-provider",
        configuration: configuration(seconds: 10),
        closure: { benchmark, provider in
            for _ in 0..<sequentialCount {
                blackHole(try await provider.request(UserEndpoint(id: 1), as: User.self))
            }
            benchmark.stopMeasurement()
            benchmark.measurement(requestsMetric, sequentialCount)
        },
        setup: { Fixture.userServer().makeProvider() }
    )

    Benchmark(
        "concurrent-raw",
        configuration: configuration(seconds: 10),
        closure: { benchmark, client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<concurrentCount {
                    group.addTask { try await client.user().id }
                }
                for try await id in group { blackHole(id) }
            }
            benchmark.stopMeasurement()
            benchmark.measurement(requestsMetric, concurrentCount)
        },
        setup: { RawClient(server: Fixture.userServer()) }
    )

    Benchmark(
        "concurrent-provider",
        configuration: configuration(seconds: 10),
        closure: { benchmark, provider in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<concurrentCount {
                    group.addTask { try await provider.request(UserEndpoint(id: 1), as: User.self).id }
                }
                for try await id in group { blackHole(id) }
            }
            benchmark.stopMeasurement()
            benchmark.measurement(requestsMetric, concurrentCount)
        },
        setup: { Fixture.userServer().makeProvider() }
    )
}

// MARK: - Building a URLRequest

/// `Endpoint.urlRequest(encoder:)` for a POST with ten query items (several needing percent-encoding)
/// and a JSON body: the pure, synchronous part of every request.
func registerBuildBenchmark() {
    Benchmark("build-request", configuration: configuration(seconds: 3)) { benchmark in
        let endpoint = SearchEndpoint.sample
        let encoder = JSONEncoder()
        for _ in 0..<buildCount {
            blackHole(try endpoint.urlRequest(encoder: encoder))
        }
        benchmark.stopMeasurement()
        benchmark.measurement(requestsMetric, buildCount)
    }
}

// MARK: - The refresh storm

/// N concurrent requests with an expired access token against the same N with a valid token. In
/// `expired`, the expiry is unknown to the app: each request gets 401, one refresh is shared by all, each
/// is resent. In `jwt`, the access token is a JWT whose `exp` claim has passed: the interceptor refreshes
/// once before sending, and no request gets a 401. Every iteration gets a fresh MockAuthServer and
/// provider, made before `startMeasurement()`; only the N requests are timed. The refresh and 401 counts
/// are checked after every iteration and reported as the `refreshes` and `unauthorized` metrics.
func registerStormBenchmarks() {
    for count in [100, 1_000] {
        for variant in ["valid", "expired", "jwt"] {
            let name = "storm-\(count)-\(variant)"
            Benchmark(name, configuration: configuration(seconds: 10, extraMetrics: [refreshesMetric, unauthorizedMetric])) { benchmark in
                let api = MockAuthServer(accessTokenIsValid: variant == "valid", issuesJWTs: variant == "jwt")
                let credential =
                    variant == "jwt"
                    ? Credential(accessToken: MockAuthServer.jwt(subject: "access-0", expiresAt: Date() - 60), refreshToken: "refresh-0")
                    : MockAuthServer.initialCredential
                let (provider, _) = api.makeAuthenticatedProvider(credential: credential)
                let endpoints = (0..<count).map { api.resource("/items/\($0)") }

                benchmark.startMeasurement()
                let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                    for endpoint in endpoints {
                        group.addTask { try await provider.request(endpoint, as: MockAuthServer.Resource.self).token }
                    }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
                benchmark.stopMeasurement()

                let (refreshes, unauthorized) = (api.refreshCount, api.expiredResponseCount)
                // With an unknown expiry, up to every request gets a 401 (those adapted after the refresh do not).
                let expectedRefreshes = variant == "valid" ? 0 : 1
                let unauthorizedAllowed = variant == "expired" ? 1...count : 0...0
                benchmark.measurement(requestsMetric, count)
                benchmark.measurement(refreshesMetric, refreshes)
                benchmark.measurement(unauthorizedMetric, unauthorized)
                if refreshes != expectedRefreshes || !unauthorizedAllowed.contains(unauthorized) {
                    benchmark.error(
                        "\(name): \(refreshes) refreshes and \(unauthorized) 401s for \(count) concurrent requests, expected \(expectedRefreshes) and \(unauthorizedAllowed)"
                    )
                } else if tokens != [api.currentAccessToken ?? ""] {
                    benchmark.error("\(name): requests were answered for \(tokens.count) different tokens, expected only the current one")
                }
            }
        }
    }
}
