import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A chunked body may end with trailer fields after its last chunk (RFC 9112 section 7.1.2, RFC 9110
/// section 6.5). FoundationNetworking on Linux (Swift 6.3.1, libcurl 7.88.1) traps on such a response
/// ("Fatal error: Transfer completed, but there's no response.", NativeProtocol.swift): libcurl hands the
/// trailer lines to the header callback, FoundationNetworking starts a new header with them and drops the
/// response it had, and the transfer then completes without one. Nothing the client sends or configures
/// avoids it, and it happens before the session's delegate hears of the response, so neither the provider
/// nor a plain `URLSession` can stop it: Docs/Limits.md lists it as a limit. Each call runs in a process of
/// its own (`TrailerProbe`, with a raw TCP server that sends the response byte for byte), so the trap kills
/// only that process. If a toolchain fixes it, the trap tests fail and say so.
@Suite("Chunked bodies that end with trailer fields (a process per call)", .timeLimit(.minutes(5)))
struct ChunkedTrailerTests {
    /// One response shape and the client that asks for it.
    struct Call: Sendable, CustomTestStringConvertible {
        /// `trailer`, `announced` (with a `Trailer` header field, RFC 9110 section 6.6.2), `empty` or `plain`.
        let shape: String
        /// `provider` or `urlsession`.
        let client: String
        var testDescription: String { "\(shape) through \(client)" }
    }

    /// Whether this platform's URLSession traps on trailer fields: FoundationNetworking's does.
    static var trapsOnTrailers: Bool {
        #if canImport(FoundationNetworking)
            true
        #else
            false
        #endif
    }

    @Test(arguments: [
        Call(shape: "trailer", client: "provider"), Call(shape: "trailer", client: "urlsession"),
        Call(shape: "announced", client: "provider"), Call(shape: "empty", client: "provider"),
    ])
    func aChunkedBodyEndingWithTrailerFieldsKillsTheProcessOnLinux(_ call: Call) async throws {
        // GIVEN a server whose chunked body ends with `X-Checksum: abc` after the last chunk (RFC 9112 section 7.1.2)
        // WHEN one call asks for it, in a process of its own
        let run = try await TrailerProbe.run(call)
        #expect(!run.wasEndedByWatchdog, "the probe was still running after \(TrailerProbe.watchdogSeconds) s: \(run.output)")
        if Self.trapsOnTrailers {
            // THEN (Linux) FoundationNetworking traps: the process dies by the trap's signal, with its message
            #expect(
                !run.exited,
                "FoundationNetworking no longer traps on chunked trailers: update Limits.md (A hostile server) and README's Linux notes. It printed: \(run.output)"
            )
            #expect(run.trapped, "the probe ended by \(run.reason) \(run.status), not a trap: \(run.output)")
            #expect(run.output.contains("Fatal error: Transfer completed, but there's no response"), "\(run.output)")
        } else {
            // THEN (Apple platforms) the body arrives and the trailer field is dropped
            #expect(run.exited && run.status == 0 && run.output.contains("outcome: body hello"), "\(run.output)")
        }
    }

    @Test(arguments: [Call(shape: "plain", client: "provider"), Call(shape: "plain", client: "urlsession")])
    func theSameChunkedBodyWithoutTrailerFieldsArrives(_ call: Call) async throws {
        // GIVEN the same response without the trailer field
        // WHEN one call asks for it, in a process of its own
        let run = try await TrailerProbe.run(call)
        // THEN the call ends with the body: the trap above is the trailer's doing, not the probe's
        #expect(!run.wasEndedByWatchdog, "the probe was still running after \(TrailerProbe.watchdogSeconds) s: \(run.output)")
        #expect(run.exited && run.status == 0, "the probe ended by \(run.reason) \(run.status): \(run.output)")
        #expect(run.output.contains("outcome: body hello"), "\(run.output)")
    }
}

/// The `TrailerProbe` executable of this package and how one run of it ended.
enum TrailerProbe {
    /// A run still going after this long is ended (a hang is a failure too); the assertions never depend on time.
    static let watchdogSeconds = 120

    struct Run {
        /// Whether the process exited (rather than died by a signal).
        let exited: Bool
        /// The exit status, or the signal that ended it.
        let status: Int32
        let wasEndedByWatchdog: Bool
        /// Its standard output and standard error, together.
        let output: String

        var reason: String { exited ? "exit" : "signal" }
        /// Died by the signal a Swift runtime trap raises: SIGILL on x86_64 (ud2), SIGTRAP on arm64 (brk).
        var trapped: Bool { !exited && (status == SIGILL || status == SIGTRAP) }
    }

    /// Next to the running tests' binary (the same build folder, whatever the configuration or scratch
    /// path), else `.build/debug`; NETWORKING_TRAILER_PROBE names another.
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["NETWORKING_TRAILER_PROBE"] { return URL(fileURLWithPath: path) }
        var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "Contents" || folder.lastPathComponent == "MacOS" {
            folder.deleteLastPathComponent()
        }
        let beside = folder.appendingPathComponent("TrailerProbe")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/TrailerProbe")
    }

    static func run(_ call: ChunkedTrailerTests.Call) async throws -> Run {
        let probe = executable
        try #require(
            FileManager.default.isExecutableFile(atPath: probe.path),
            "no TrailerProbe at \(probe.path): swift build --package-path IntegrationTests --build-tests"
        )
        let process = Process()
        process.executableURL = probe
        process.arguments = [call.shape, call.client]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"   // the trap's message alone, without the backtracer's report
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Both waits on threads of their own: blocking global-queue threads would starve the watchdog (Linux's
        // pool is small), and SIGKILL because the child inherits this process's blocked SIGTERM (Process.terminate).
        let finished = DispatchSemaphore(value: 0)
        let ended = Flag()
        let pid = process.processIdentifier
        Thread.detachNewThread {
            guard finished.wait(timeout: .now() + .seconds(watchdogSeconds)) == .timedOut else { return }
            ended.set()
            kill(pid, SIGKILL)
        }
        let printed = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                finished.signal()
                continuation.resume(returning: data)
            }
        }
        return Run(
            exited: process.terminationReason == .exit, status: process.terminationStatus, wasEndedByWatchdog: ended.isSet,
            output: String(decoding: printed, as: UTF8.self)
        )
    }

    /// Set once, read from any thread: whether the watchdog ended the process.
    final class Flag: @unchecked Sendable {
        // @unchecked: `value` is guarded by `lock`.
        private let lock = NSLock()
        private var value = false

        func set() {
            lock.lock()
            value = true
            lock.unlock()
        }

        var isSet: Bool {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }
}
