import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The mock's faults (OkHttp MockWebServer's vocabulary) end a provider's call as the real fault would:
/// a stall by the request's timeout, the deadline or a cancel; a lost connection with its error; a
/// throttled body arrives whole, with rising progress.
@Suite("Mock faults", SuiteTimeLimit.oneMinute)
struct MockFaultTests {
    private let body = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0) })

    private func isTransportError(_ error: any Error, _ code: URLError.Code) -> Bool {
        guard case NetworkError.transportFailed(let urlError) = error else { return false }
        return urlError.code == code
    }

    // MARK: Shapes

    @Test func aThrottledBodyIsCutIntoChunksOfTheSizeEachAfterThePause() {
        // GIVEN a 10-byte body throttled to 4 bytes every 10 ms
        let response = MockResponse.json(raw: "0123456789").throttled(bytesPerChunk: 4, every: 0.01)
        // THEN it is sent as 4 + 4 + 2 bytes, the first with the head, with its whole length declared
        #expect(response.chunks.map { String(decoding: $0.data, as: UTF8.self) } == ["0123", "4567", "89"])
        #expect(response.chunks.map(\.delay) == [0, 0.01, 0.01])
        #expect(response.headers["Content-Length"] == "10")
        #expect(response.uploadThrottle?.bytesPerChunk == 4)
    }

    @Test func faultsComposeAClosedConnectionKeepsTheThrottledChunksBeforeIt() {
        // GIVEN a throttled body whose connection is lost after 6 bytes
        let response = MockResponse.json(raw: "0123456789").throttled(bytesPerChunk: 4, every: 0.01).closingAfter(bytes: 6)
        // THEN 4 bytes, then 2 after the pause, then the lost connection; the declared length stays 10
        #expect(response.chunks.map { String(decoding: $0.data, as: UTF8.self) } == ["0123", "45"])
        #expect(response.chunks.map(\.delay) == [0, 0.01])
        #expect(response.error?.code == .networkConnectionLost)
        #expect(response.headers["Content-Length"] == "10")
    }

    // MARK: Stall before headers

    @Test func aStallBeforeTheHeadersEndsAtTheRequestTimeout() async throws {
        // GIVEN a server that reads the request and never answers, a 1 s timeout and a 20 s deadline
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(raw: "{}").stallingBeforeHeaders())
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN the timeout ends it with URLSession's timedOut
        await #expect { _ = try await provider.response(TestEndpoint(timeout: 1)) } throws: { isTransportError($0, .timedOut) }
        #expect(await server.waitForInterruptions(1))
    }

    @Test func aStallBeforeTheHeadersEndsAtTheDeadlineWhenItComesFirst() async throws {
        // GIVEN a head that comes after 30 s, a 30 s timeout and a 0.5 s deadline
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(raw: "{}").stallingBeforeHeaders(for: 30))
        let provider = server.makeProvider(deadline: 0.5)
        // WHEN it is requested, THEN the deadline ends it
        await #expect { _ = try await provider.response(TestEndpoint(timeout: 30)) } throws: { error in
            guard case NetworkError.deadlineExceeded(0.5) = error else { return false }
            return true
        }
    }

    @Test func aHeadThatComesBeforeTheTimeoutIsAnswered() async throws {
        // GIVEN a head 20 ms late and a 30 s timeout
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(raw: #"{"ok":true}"#).stallingBeforeHeaders(for: 0.02))
        // WHEN it is requested, THEN the response arrives
        let response = try await server.makeProvider().response(TestEndpoint(timeout: 30))
        #expect(String(decoding: response.data, as: UTF8.self) == #"{"ok":true}"#)
    }

    @Test func aCallCancelledDuringAStallBeforeTheHeadersEnds() async throws {
        // GIVEN a server that never answers, and a call waiting for it
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(raw: "{}").stallingBeforeHeaders())
        let provider = server.makeProvider()
        let call = Task { try await provider.response(TestEndpoint(timeout: 30)) }
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        // WHEN the call is cancelled, THEN it ends as cancelled and the server sees the request given up
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { _ = try await call.value }
        #expect(await server.waitForInterruptions(1))
    }

    // MARK: Stall mid-body

    @Test func aStallMidBodyEndsAtTheRequestTimeoutAsAnIdleTimeout() async throws {
        // GIVEN a body that stops after 100 bytes, a 1 s timeout and a 20 s deadline
        let server = MockServer()
        server.stub(.get, "/v1/files/1", MockResponse(body: body).stallingAfter(bytes: 100))
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN no byte for 1 s ends it with timedOut
        await #expect { _ = try await provider.response(TestEndpoint(path: "/files/1", timeout: 1)) } throws: {
            isTransportError($0, .timedOut)
        }
    }

    @Test func aCallCancelledDuringAStallMidBodyEnds() async throws {
        // GIVEN a download whose body stops after 100 bytes
        let server = MockServer()
        server.stub(.get, "/v1/files/1", MockResponse(body: body).stallingAfter(bytes: 100))
        let provider = server.makeProvider()
        let (progress, reporter) = TransferProgress.makeStream()
        let call = Task { try await provider.download(TestEndpoint(path: "/files/1", timeout: 30), to: temporaryFile(), progress: reporter) }
        // WHEN its first bytes arrived and it is cancelled
        for await step in progress where step.completedBytes == 100 { break }
        call.cancel()
        // THEN it ends as cancelled
        await #expect(throws: NetworkError.cancelled) { _ = try await call.value }
    }

    // MARK: Close mid-body

    @Test func aConnectionClosedMidBodyFailsWithConnectionLost() async throws {
        // GIVEN a body whose connection is lost after 100 of its 4096 bytes
        let server = MockServer()
        server.stub(.get, "/v1/files/1", MockResponse(body: body).closingAfter(bytes: 100))
        let provider = server.makeProvider(maximumAttempts: 1)
        // WHEN it is requested, THEN the call fails with networkConnectionLost
        await #expect { _ = try await provider.response(TestEndpoint(path: "/files/1")) } throws: {
            isTransportError($0, .networkConnectionLost)
        }
    }

    // MARK: Throttle

    @Test func aThrottledBodyArrivesWholeWithRisingProgress() async throws {
        // GIVEN a 4096-byte body sent 512 bytes every 30 ms
        let server = MockServer()
        server.stub(.get, "/v1/files/1", MockResponse(body: body).throttled(bytesPerChunk: 512, every: 0.03))
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }
        // WHEN it is downloaded while progress is read
        let (progress, reporter) = TransferProgress.makeStream()
        async let response = server.makeProvider().download(TestEndpoint(path: "/files/1", timeout: 30), to: destination, progress: reporter)
        var seen: [TransferProgress] = []
        for await step in progress { seen.append(step) }
        // THEN the whole body arrived, and progress rose in several steps to the declared total
        #expect(try await response.statusCode == 200)
        #expect(try Data(contentsOf: destination) == body)
        // (how many steps a reader sees depends on when its task runs: the stream keeps the newest value only)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes })
        #expect(seen.last?.completedBytes == 4_096)
        #expect(server.requests.count == 1)
        #expect(seen.allSatisfy { $0.totalBytes == 4_096 })
    }

    @Test func aThrottledBodySlowerInAllThanTheTimeoutStillArrives() async throws {
        // GIVEN 8 chunks 0.25 s apart (1.75 s in all) and a 1 s timeout, which no single pause reaches (a wide
        // margin: the mock's clock queue may run late on a busy machine)
        let server = MockServer()
        server.stub(.get, "/v1/files/1", MockResponse(body: body).throttled(bytesPerChunk: 512, every: 0.25))
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN it arrives whole
        let response = try await provider.response(TestEndpoint(path: "/files/1", timeout: 1))
        #expect(response.data == body)
    }

    private func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("mock-fault-\(UUID().uuidString).bin")
    }
}
