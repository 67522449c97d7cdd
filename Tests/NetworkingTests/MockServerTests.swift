import Foundation
import Networking
import Testing

@testable import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The test kit itself: bounded recordings, and the mock's way back into URLSession.
@Suite("MockServer")
struct MockServerTests {
    @Test func recordingsAreBoundedAndCanBeCleared() async throws {
        // GIVEN a server that keeps the last 10 requests
        let server = MockServer(recordingLimit: 10)
        server.stub { _ in .status(204) }
        let provider = server.makeProvider()
        // WHEN 250 requests arrive
        for index in 0..<250 { _ = try await provider.response(TestEndpoint(path: "/r/\(index)")) }
        // THEN the last 10 are kept, in order, and the rest are counted
        #expect(server.requests.map(\.path) == (240..<250).map { "/v1/r/\($0)" })
        #expect(server.droppedRecordingCount == 240)
        // and clearing forgets them but keeps the stubs
        server.clearRecordings()
        #expect(server.requests.isEmpty && server.droppedRecordingCount == 0)
        #expect(try await provider.response(TestEndpoint(path: "/again")).statusCode == 204)
        #expect(server.requests.map(\.path) == ["/v1/again"])
    }

    @Test func aResponseDelayedForeverWaitsUntilTheCallIsCancelled() async throws {
        // GIVEN a stub that never answers (a delay of .infinity)
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: .infinity))
        let provider = server.makeProvider()
        let call = Task { try await provider.response(TestEndpoint()) }
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        // WHEN the calling task is cancelled
        call.cancel()
        // THEN the call ends with a cancellation error (no trap; neither a timeout nor an answer, which
        // never comes), and the load was stopped
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(await server.waitForInterruptions(1))
        #expect(server.interruptedCount == 1)
    }

    @Test func aResponseDelayedForeverEndsAtTheEndpointsDeadline() async throws {
        // GIVEN a stub that never answers, and an endpoint with a short deadline
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: .infinity))
        struct Quick: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/users/1" }
            var deadline: TimeInterval? { 0.3 }
        }
        // WHEN it is called, THEN it ends with the deadline error
        await #expect {
            try await server.makeProvider().response(Quick())
        } throws: { error in
            guard case NetworkError.deadlineExceeded(0.3) = error else { return false }
            return true
        }
    }

    @Test func aChunkThatNeverComesWaitsUntilTheStreamIsCancelled() async throws {
        // GIVEN a streamed response whose second chunk never comes (an interval of .infinity)
        let server = MockServer()
        var endless = MockResponse.chunked(["data: one\n\n", "data: two\n\n"], headers: ["Content-Type": "text/event-stream"])
        endless.chunks[1].delay = .infinity
        server.stub(.get, "/v1/endless", endless)
        let provider = server.makeProvider()
        let firstLine = Signal()
        let reader = Task {
            var lines: [String] = []
            for try await line in try await provider.stream(TestEndpoint(path: "/endless")).lines {
                lines.append(line)
                firstLine.fire()
            }
            return lines
        }
        await firstLine.wait()
        // WHEN the reading task is cancelled while waiting for the chunk
        reader.cancel()
        // THEN the reader ends (no trap), and the load was stopped
        _ = await reader.result
        #expect(await server.waitForInterruptions(1))
        #expect(server.interruptedCount == 1)
    }

    @Test(arguments: [TimeInterval.nan, -1, -TimeInterval.infinity])
    func aDelayThatIsNotANumberOrNegativeMeansNoDelay(delay: TimeInterval) async throws {
        // GIVEN a stub whose delay, and whose chunks' interval, is NaN or negative
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(["id": 1]).delayed(by: delay))
        server.stub(.get, "/v1/chunks", .chunked(["a", "b"], interval: delay))
        let provider = server.makeProvider()
        // WHEN they are called, THEN they answer at once, whole
        #expect(try await provider.response(TestEndpoint()).statusCode == 200)
        #expect(try await provider.response(TestEndpoint(path: "/chunks")).data == Data("ab".utf8))
    }

    #if canImport(FoundationNetworking)
        @Test func theMockFindsTheTasksWorkQueueOnThisToolchain() {
            // The mock must call URLSession back on the task's private work queue (see ClientThread); if a
            // toolchain renames it, this fails here instead of the mock crashing tests at random.
            let task = URLSession(configuration: .ephemeral).dataTask(with: URL(string: "http://127.0.0.1:9/")!)
            #expect(ClientThread.workQueue(of: task) != nil)
        }
    #endif
}
