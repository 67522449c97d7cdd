import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scratch folder for one test, removed by the test.
private func makeScratchFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// How a test reads a stream: its chunks, its lines or its events.
enum StreamView: String, CaseIterable, Sendable {
    case chunks, lines, events
}

@Suite("Transfer defects: streams")
struct StreamDefectTests {
    @Test(arguments: StreamView.allCases)
    func breakingOutOfTheLoopStopsTheTransferWhileTheStreamIsStillHeld(view: StreamView) async throws {
        // GIVEN a slow event stream that would run for a long time
        let server = MockServer()
        server.stub(.get, "/v1/ticks", .chunked((0..<1_000).map { "data: \($0)\n\n" }, interval: 0.02))
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/ticks"))
        // WHEN the reader breaks out of its loop after the first element, still holding the stream
        switch view {
        case .chunks: for try await _ in stream { break }
        case .lines: for try await _ in stream.lines { break }
        case .events: for try await _ in stream.events { break }
        }
        // THEN the transfer is stopped (the mock sees its load stopped) while the stream is still in scope
        let stopped = await server.waitForInterruptions(1, timeout: 10)
        withExtendedLifetime(stream) {}
        #expect(stopped)
        #expect(server.interruptedCount == 1)
    }
}
