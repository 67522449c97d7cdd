import Foundation
import Networking
import TestServer
import Testing

/// Bodies that would fill memory: each case is one call made by `MemoryProbe` in a process of its own
/// (so the peak resident memory measured is that call's alone, not shared with other tests), against
/// `hostile_server.py` over TCP. The probe is the release build when `.ci/run` made one (it runs
/// `swift build --package-path IntegrationTests -c release --product MemoryProbe` first) and it is newer
/// than the debug build; otherwise the debug build (the bounds hold for both). NETWORKING_MEMORY_PROBE
/// names another.
@Suite("Memory while a huge body arrives (a process per call)", .serialized, .timeLimit(.minutes(10)))
struct BodyMemoryTests {
    /// One body and the limit of the call that receives it.
    struct BodyCase: Sendable, CustomTestStringConvertible {
        let path: String
        /// The call's size limit, or nil for the provider's default (64 MiB).
        let limit: Int?
        /// The most the process's peak may rise during the call, in MiB.
        let boundMiB: Int

        var limitArgument: String { limit.map(String.init) ?? "default" }
        var expectedLimit: Int { limit ?? NetworkProvider.defaultMaximumResponseSize }
        var testDescription: String { "\(path), \(limit.map { "\($0 >> 20) MiB" } ?? "64 MiB (default)") limit" }
    }

    /// 1 GiB close-delimited, 1 GiB chunked, a declared 10 GiB, and 2 GiB of zeros in each content coding
    /// libcurl decodes here; at the default limit and at 8 MiB. A brotli body may make libcurl allocate a
    /// 16 MiB window of its own, over what the 8 MiB bound leaves (see Docs/Limits.md).
    static let cases: [BodyCase] = ["/huge-close", "/huge-chunked", "/huge-declared", "/bomb-gzip", "/bomb-deflate", "/bomb-br", "/bomb-zstd"]
        .flatMap { path in
            [BodyCase(path: path, limit: nil, boundMiB: 128), BodyCase(path: path, limit: 8 << 20, boundMiB: path == "/bomb-br" ? 80 : 64)]
        }

    @Test(arguments: cases)
    func aHugeBodyIsStoppedWhileItArrives(_ body: BodyCase) async throws {
        let probe = try #require(MemoryProbe.executable, "no MemoryProbe: swift build --package-path IntegrationTests -c release --product MemoryProbe")
        try await withHostileServer { base in
            // GIVEN a server sending the body as fast as the client reads it
            // WHEN a call allowing the limit is made, in a process of its own
            let result = try await probe.run(base, body.path, body.limitArgument)
            print("memory \(body.testDescription): \(result.outcome) after \(result.seconds) s, peak +\(result.growthMiB) MiB (\(probe.build))")
            // THEN it ends with the size error, promptly, and the process's peak stayed within the bound
            #expect(result.outcome == "responseTooLarge(\(body.expectedLimit))")
            #expect(result.seconds < 40, "the call ended after \(result.seconds) s")
            #expect(result.growthMiB <= body.boundMiB, "the peak rose by \(result.growthMiB) MiB")
        }
    }
}

/// The delegate queue's back-pressure (Linux) with many transfers in one session: it holds the session's work
/// queue, which every task of the provider shares, while 64 callbacks wait.
@Suite("Back-pressure with hundreds of calls over TCP", .timeLimit(.minutes(3)))
struct BackpressureConcurrencyTests {
    @Test func hundredsOfConcurrentCallsArriveWholeWhileTheSessionIsHeldBack() async throws {
        try await withServer { server in
            // GIVEN one provider, and 200 calls each answered with 1 MiB chunked as fast as the server writes
            let client = LiveClient(server)
            try await client.signIn()
            // WHEN they are all made at once (far more than the 64 callbacks the queue lets wait)
            let started = Date()
            let whole = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let data = try await client.provider.response(client.call("/download", queryItems: ["mb": "1", "chunked": "1"])).data
                        return data.count == 1 << 20
                            && stride(from: 0, to: 1 << 20, by: 1 << 14).allSatisfy { data[data.startIndex + $0] == TestServer.downloadByte(at: $0) }
                    }
                }
                var whole = 0
                for try await arrived in group where arrived { whole += 1 }
                return whole
            }
            print("back-pressure: 200 concurrent calls of 1 MiB in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
            // THEN every body arrives whole and in order: nothing lost, nothing stuck
            #expect(whole == 200)
        }
    }
}

/// The `MemoryProbe` executable of this package and what one run of it printed.
struct MemoryProbe {
    let url: URL
    /// Which build it is: release, debug, or the environment's.
    let build: String

    struct Result: Decodable {
        let outcome: String
        let seconds: Double
        let growthMiB: Int
        let peakWasReset: Bool
    }

    /// The release build when it is newer than the debug build (`.ci/run` builds it after the tests).
    static var executable: MemoryProbe? {
        if let path = ProcessInfo.processInfo.environment["NETWORKING_MEMORY_PROBE"] {
            return MemoryProbe(url: URL(fileURLWithPath: path), build: "NETWORKING_MEMORY_PROBE")
        }
        let build = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build")
        func modified(_ configuration: String) -> (URL, Date)? {
            let url = build.appendingPathComponent(configuration).appendingPathComponent("MemoryProbe")
            guard let date = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date else { return nil }
            return (url, date)
        }
        let release = modified("release")
        let debug = modified("debug")
        if let release, debug.map({ release.1 >= $0.1 }) ?? true { return MemoryProbe(url: release.0, build: "release") }
        return debug.map { MemoryProbe(url: $0.0, build: "debug") }
    }

    /// Runs one call (`mode`: the probe's) and returns what it printed; a probe still running after 90 s
    /// is ended, and that is an error.
    func run(_ base: URL, _ path: String, _ limit: String, mode: String = "response") async throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = [base.absoluteString, path, limit, mode]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: watchdog)
        let printed = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: data)
            }
        }
        watchdog.cancel()
        guard process.terminationReason == .exit, process.terminationStatus == 0,
            let line = String(decoding: printed, as: UTF8.self).split(separator: "\n").last
        else {
            throw ProbeFailure(status: process.terminationStatus, printed: String(decoding: printed, as: UTF8.self))
        }
        return try JSONDecoder().decode(Result.self, from: Data(line.utf8))
    }

    struct ProbeFailure: Error {
        let status: Int32
        let printed: String
    }
}
