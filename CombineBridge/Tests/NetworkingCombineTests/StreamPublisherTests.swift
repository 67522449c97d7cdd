import Foundation
import Networking
import NetworkingCombine
import NetworkingTestSupport
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

/// `streamPublisher`, `linesPublisher` and `eventsPublisher`: a streamed body, read as the subscriber asks.
@Suite("Combine: stream publishers", SuiteTimeLimit.oneMinute)
struct StreamPublisherTests {
    @Test func aStreamPublisherEmitsTheBodysChunksThenFinishes() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/log", .chunked(["one,", "two,", "three"]))
        let probe = Probe<Data>()
        server.makeProvider().streamPublisher(API(path: "/log")).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(String(decoding: probe.values.reduce(Data(), +), as: UTF8.self) == "one,two,three")
    }

    @Test func aLinesPublisherEmitsEachLineThenFinishes() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/log", .chunked(["first\nsec", "ond\r\nthird"]))
        let probe = Probe<String>()
        server.makeProvider().linesPublisher(API(path: "/log")).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == ["first", "second", "third"])
    }

    @Test func anEventsPublisherEmitsEachServerSentEventThenFinishes() async throws {
        let server = MockServer()
        server.stub(
            .get, "/v1/chat",
            .chunked(["event: token\ndata: Hel\n\n", "event: token\ndata: lo\n\n"], headers: ["Content-Type": "text/event-stream"]))
        let probe = Probe<ServerSentEvent>()
        server.makeProvider().eventsPublisher(API(path: "/chat")).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == [ServerSentEvent(event: "token", data: "Hel"), ServerSentEvent(event: "token", data: "lo")])
    }

    @Test func aBodyThatDropsMidStreamFailsThePublisherAfterTheLinesThatCame() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/log", .chunked(["a\nb\n"], failingWith: URLError(.networkConnectionLost)))
        let probe = Probe<String>()
        server.makeProvider().linesPublisher(API(path: "/log")).subscribe(probe)
        let error = await probe.failure()
        #expect(error is NetworkError)
        #expect(probe.values == ["a", "b"])
    }

    @Test func aSubscriberAskingOneLineAtATimeGetsNoMoreThanItAsked() async throws {
        // GIVEN a body of 20 lines that arrive at once
        let server = MockServer()
        server.stub(.get, "/v1/log", .chunked((0..<20).map { "line \($0)\n" }))
        let probe = Probe<String>(initialDemand: .none)
        server.makeProvider().linesPublisher(API(path: "/log")).subscribe(probe)
        // WHEN it asks for one line, then one more
        probe.request(1)
        #expect(await probe.values(count: 1) == ["line 0"])
        probe.request(1)
        // THEN it has exactly two, and no end: the rest waits for demand
        #expect(await probe.values(count: 2) == ["line 0", "line 1"])
        #expect(probe.values.count == 2 && probe.completed == nil)
        probe.cancel()
    }

    @Test func aSlowSubscriberIsNotBufferedForTheStreamsLimitHolds() async throws {
        // GIVEN a 64 KiB body in 1 KiB chunks, a stream limit of 8 KiB, and a subscriber that takes one chunk
        let server = MockServer()
        server.stub(.get, "/v1/log", .chunked((0..<64).map { _ in Data(repeating: 0x61, count: 1_024) }, interval: 0.005))
        let probe = Probe<Data>(initialDemand: .max(1))
        server.makeProvider().streamPublisher(API(path: "/log", maximumResponseSize: 8_192)).subscribe(probe)
        // WHEN it asks for nothing more while the body arrives
        // THEN the publisher does not read the body into a backlog for it: the stream, holding at most 8 KiB
        // that nobody read, stops the transfer once the subscriber fell further behind
        #expect(await server.waitForInterruptions(1))
        // and when the subscriber asks again, it gets what the stream held, then the stream's error
        probe.request(1_000)
        let error = await probe.failure()
        guard case NetworkError.responseTooLarge(limit: 8_192)? = error else { throw Failed("expected responseTooLarge, got \(String(describing: error))") }
        #expect(probe.values.count < 64)
        #expect(probe.values.reduce(0) { $0 + $1.count } <= 8_192 + 2 * 1_024)
    }

    @Test func cancellingTheSubscriptionCancelsTheTransferAtOnce() async throws {
        // GIVEN a stream whose body stalls after its first line
        let server = MockServer()
        server.stub(.get, "/v1/log", MockResponse(body: Data("hello\nworld\n".utf8)).stallingAfter(bytes: 6))
        let probe = Probe<String>()
        server.makeProvider().linesPublisher(API(path: "/log", timeout: 60)).subscribe(probe)
        #expect(await probe.values(count: 1) == ["hello"])
        // WHEN the subscription is cancelled
        probe.cancel()
        // THEN the server sees the transfer stopped, and the subscriber hears nothing more
        #expect(await server.waitForInterruptions(1))
        #expect(probe.values == ["hello"] && probe.completed == nil)
    }

    @Test func cancellingASubscriberThatWaitsForDemandCancelsTheTransfer() async throws {
        // GIVEN a subscriber that took one line of a body that stalls, and asks for nothing more
        let server = MockServer()
        server.stub(.get, "/v1/log", MockResponse(body: Data("a\nb\nc\n".utf8)).stallingAfter(bytes: 4))
        let probe = Probe<String>(initialDemand: .max(1))
        server.makeProvider().linesPublisher(API(path: "/log", timeout: 60)).subscribe(probe)
        #expect(await probe.values(count: 1) == ["a"])
        // WHEN it cancels while the publisher waits for its demand
        probe.cancel()
        // THEN the transfer is stopped too
        #expect(await server.waitForInterruptions(1))
        #expect(probe.completed == nil)
    }
}
