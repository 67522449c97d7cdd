import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 33, part 2: a slot is held per exchange, from its task's start to the end of its body, whatever
/// the body is (gathered, streamed, downloaded), and given back however the exchange ends.
@Suite("Scheduling: slots held per exchange, streams and downloads included, and given back on every path", SuiteTimeLimit.threeMinutes)
struct SchedulingSlotTests {
    let server = MockServer()

    init() {
        server.stub(.get, "/v1/items", .json(["ok": true]))
    }

    @Test("a streamed body holds its slot until it ends: a call behind it is sent only after the reader stops")
    func streamHoldsSlot() async throws {
        var open = MockResponse(statusCode: 200, headers: ["Content-Type": "text/plain"])
        open.chunks = [(Data("first".utf8), 0), (Data("never".utf8), 3_600)]
        server.stub(.get, "/v1/stream", open)
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        let stream = try await provider.stream(ScheduledCall("stream"))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data("first".utf8))
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)   // the stream was handed out, its body goes on: the slot is still taken
        #expect(server.requests(.get, "/v1/items").isEmpty)
        _ = consume iterator   // the reader stops: the body ends, and so does the slot
        let response = try await queued.value
        #expect(response.statusCode == 200 && response.report.queueWait > 0)
    }

    @Test("a download holds its slot until its file is written")
    func downloadHoldsSlot() async throws {
        let file = HeldAnswers()
        file.stub(server, "/v1/file", answer: MockResponse(statusCode: 200, body: Data(repeating: 7, count: 100_000)))
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        let download = Task { try await provider.download(ScheduledCall("file"), to: folder.appendingPathComponent("file")) }
        _ = try await server.nextRequest(matching: .get, "/v1/file")
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        #expect(server.requests(.get, "/v1/items").isEmpty)
        file.release()
        #expect(try await download.value.statusCode == 200)
        #expect(try await queued.value.report.queueWait > 0)
        #expect(try Data(contentsOf: folder.appendingPathComponent("file")).count == 100_000)
    }

    @Test("a redirect hop takes a slot of the host it goes to, after giving back the first host's (RFC 9110 §15.4)")
    func redirectHopTakesItsHostsSlot() async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/hop", .status(302, headers: ["Location": "https://b.example.com/v1/held"]))
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        let blocker = Task { try await provider.response(ScheduledCall("held", host: "b.example.com")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let redirected = Task { try await provider.response(ScheduledCall("hop", host: "a.example.com")) }
        _ = try await server.nextRequest(matching: .get, "/v1/hop")
        await waitUntilQueued(1, in: provider)   // its hop waits for b.example.com
        #expect(server.requests(.get, "/v1/held").count == 1)
        // a.example.com's slot was given back when its 302 ended: another call there goes at once.
        #expect(try await provider.response(ScheduledCall(host: "a.example.com")).report.queueWait == 0)
        held.release()
        _ = try await blocker.value
        let response = try await redirected.value
        #expect(response.report.redirects.count == 1 && response.report.queueWait > 0)
        #expect(provider.slots.inFlightCount == 0)
    }

    /// How an exchange ends, for the release tests.
    enum Ending: String, CaseIterable, Sendable {
        case unacceptableStatus, transportFailure, tooLarge, cancelledInFlight, deadlineInFlight, cancelledStream
    }

    @Test("the slot is given back however the exchange ends: the next call takes it at once", arguments: Ending.allCases)
    func slotGivenBack(_ ending: Ending) async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/500", .status(500))
        server.stub(.get, "/v1/drop", .failure(URLError(.networkConnectionLost)))
        server.stub(.get, "/v1/large", MockResponse(statusCode: 200, body: Data(repeating: 1, count: 10_000)))
        server.stub(.get, "/v1/chunks", MockResponse.chunked(["a", "b", "c"], interval: 30))
        let provider = makeScheduledProvider(server, Scheduling(maximumCalls: 1, maximumCallsPerHost: 1))
        switch ending {
        case .unacceptableStatus:
            await #expect(throws: NetworkError.invalidStatusCode(500)) { try await provider.response(ScheduledCall("500")) }
        case .transportFailure:
            await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) { try await provider.response(ScheduledCall("drop")) }
        case .tooLarge:
            var call = ScheduledCall("large")
            call.maximumResponseSize = 1_000
            await #expect(throws: NetworkError.responseTooLarge(limit: 1_000)) { try await provider.response(call) }
        case .cancelledInFlight:
            let call = Task { try await provider.response(ScheduledCall("held")) }
            _ = try await server.nextRequest(matching: .get, "/v1/held")
            call.cancel()
            await #expect(throws: NetworkError.cancelled) { try await call.value }
        case .deadlineInFlight:
            var call = ScheduledCall("held")
            call.deadline = 0.3
            await #expect(throws: NetworkError.deadlineExceeded(seconds: 0.3)) { try await provider.response(call) }
        case .cancelledStream:
            let stream = try await provider.stream(ScheduledCall("chunks"))
            let reader = Task { for try await _ in stream {} }
            reader.cancel()
            _ = try? await reader.value
            await pollUntil { provider.slots.inFlightCount == 0 }   // the cancelled task completes a moment later
        }
        #expect(provider.slots.inFlightCount == 0)
        let next = try await provider.response(ScheduledCall())
        #expect(next.report.queueWait == 0)
    }

    @Test("a redirect hop keeps its call's place in the queue: it goes before the calls queued after its call (RFC 9110 §15.4)")
    func redirectHopKeepsItsPlace() async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/hop", .status(302, headers: ["Location": "https://api.example.com/v1/target"]))
        server.stub { request in .json(["path": request.path]) }
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let redirected = Task { try await provider.response(ScheduledCall("hop")) }
        await waitUntilQueued(1, in: provider)
        var others: [Task<Response, any Error>] = []
        for index in 0..<5 {
            others.append(Task { try await provider.response(ScheduledCall("other-\(index)")) })
            await waitUntilQueued(index + 2, in: provider)
        }
        held.release()
        _ = try await blocker.value
        _ = try await redirected.value
        for other in others { _ = try await other.value }
        let sent = server.requests.map(\.path)
        let hop = try #require(sent.firstIndex(of: "/v1/hop"))
        let target = try #require(sent.firstIndex(of: "/v1/target"))
        // The hop's own 302 gave its slot back to the call first in the queue (other-0) before the hop could ask
        // again: the hop waits for that one exchange, not for the four calls queued after its call (at the back
        // of the queue, it was sent last).
        #expect(target <= hop + 2, "sent: \(sent)")
        #expect(sent.suffix(4) == ["/v1/other-1", "/v1/other-2", "/v1/other-3", "/v1/other-4"], "sent: \(sent)")
    }
}
