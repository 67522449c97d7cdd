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

/// `requestPublisher` and `responsePublisher`: one call per subscription, from the first demand.
@Suite("Combine: request and response publishers", SuiteTimeLimit.oneMinute)
struct CallPublisherTests {
    @Test func aRequestPublisherEmitsTheDecodedBodyOnceThenFinishes() async throws {
        // GIVEN a server that answers the user
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        // WHEN a subscriber asks for it
        let probe = Probe<User>()
        server.makeProvider().requestPublisher(API(), as: User.self).subscribe(probe)
        // THEN it gets the user, then the end
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == [User(id: 1, name: "Kim")])
    }

    @Test func nothingIsSentBeforeASubscriberAsksForAValue() async throws {
        // GIVEN a publisher, made, and subscribed to by a subscriber that asks for nothing yet
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        server.stub(.get, "/v1/marker", .status(204))
        let provider = server.makeProvider()
        let publisher = provider.responsePublisher(API())
        let probe = Probe<Response>(initialDemand: .none)
        publisher.subscribe(probe)
        // WHEN another call completes, and only then the subscriber asks
        _ = try await provider.response(API(path: "/marker"))
        probe.request(1)
        // THEN the publisher's request came after it: nothing was sent at creation or subscription
        _ = await probe.completion()
        #expect(server.requests.map(\.path) == ["/v1/marker", "/v1/users/1"])
        #expect(probe.values.map(\.statusCode) == [200])
    }

    @Test func eachSubscriptionSendsItsOwnCall() async throws {
        // GIVEN one publisher
        let server = MockServer()
        server.stub(.delete, "/v1/users/1", .status(204))
        let publisher = server.makeProvider().requestPublisher(API(method: .delete))
        // WHEN two subscribers subscribe to it
        let first = Probe<Void>()
        let second = Probe<Void>()
        publisher.subscribe(first)
        publisher.subscribe(second)
        _ = await first.completion()
        _ = await second.completion()
        // THEN two requests were sent, and each subscriber got one value
        #expect(server.requests.count == 2)
        #expect(first.values.count == 1 && second.values.count == 1)
    }

    @Test func aFailedCallFailsThePublisherWithTheCallsError() async throws {
        // GIVEN a server that answers 404
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(404))
        // WHEN a subscriber subscribes
        let probe = Probe<User>()
        server.makeProvider().requestPublisher(API(), as: User.self).subscribe(probe)
        // THEN it fails with the call's NetworkError, and no value came
        let error = await probe.failure()
        guard case NetworkError.invalidStatusCode(404)? = error else { throw Failed("expected a 404, got \(String(describing: error))") }
        #expect(probe.values.isEmpty)
    }

    @Test func cancellingTheSubscriptionCancelsTheCallAtOnceAndSendsNoCompletion() async throws {
        // GIVEN a call whose answer would take 30 s, in flight
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(User(id: 1, name: "Kim")).delayed(by: 30))
        let probe = Probe<User>()
        server.makeProvider().requestPublisher(API(), as: User.self).subscribe(probe)
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        // WHEN the subscription is cancelled
        probe.cancel()
        // THEN the server sees the request stopped, and the subscriber hears nothing more
        #expect(await server.waitForInterruptions(1))
        #expect(probe.values.isEmpty && probe.completed == nil)
    }
}

/// A test failure with a message.
struct Failed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
