import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Idempotency keys", SuiteTimeLimit.oneMinute)
struct IdempotencyKeyTests {
    private let policy = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")

    @Test func theAttemptsOfOnePOSTCarryTheSameKeyAndAnotherCallAnother() async throws {
        // GIVEN a POST answered 503, 503, then 201, and a policy with an idempotency key header
        let server = MockServer()
        server.stub(.post, "/v1/orders", .status(503), .status(503), .status(201))
        let provider = server.makeProvider(interceptor: policy, sleep: RecordedDelays().sleep)
        let order = TestEndpoint(path: "/orders", method: .post, body: .data(Data("{}".utf8), contentType: "application/json"))
        // WHEN it is sent, and sent again as a second call
        #expect(try await provider.response(order).statusCode == 201)
        #expect(try await provider.response(order).statusCode == 201)
        // THEN the three attempts of the first call carried one key, a UUID, and the second call another
        let keys = server.requests.map { $0.header("Idempotency-Key") }
        #expect(keys.count == 4)
        let first = try #require(keys[0])
        #expect(UUID(uuidString: first) != nil)
        #expect(keys[1] == first && keys[2] == first)
        #expect(keys[3] != nil && keys[3] != first)
    }

    @Test func aKeyTheEndpointSetIsKeptAndAnIdempotentMethodGetsNone() async throws {
        // GIVEN a POST whose endpoint sets its own key, and a GET
        let server = MockServer()
        server.stub(.post, "/v1/orders", .status(503), .status(201))
        server.stub(.get, "/v1/orders", .status(503), .status(200))
        let provider = server.makeProvider(interceptor: policy, sleep: RecordedDelays().sleep)
        // WHEN both are sent
        _ = try await provider.response(TestEndpoint(path: "/orders", method: .post, headers: ["idempotency-key": "order-42"]))
        _ = try await provider.response(TestEndpoint(path: "/orders"))
        // THEN the POST's retry carried the endpoint's key, and the GET (retried anyway) none
        #expect(server.requests(.post, "/v1/orders").map { $0.header("Idempotency-Key") } == ["order-42", "order-42"])
        #expect(server.requests(.get, "/v1/orders").map { $0.header("Idempotency-Key") } == [nil, nil])
    }

    @Test func aPOSTIsNotRetriedWithoutAKeyHeaderNorWhenThePolicyOnlyRetries() async throws {
        // GIVEN a POST answered 503 then 201
        let server = MockServer()
        server.stub(.post, "/v1/orders", .status(503), .status(201))
        let order = TestEndpoint(path: "/orders", method: .post)
        // WHEN it is sent with a policy without a key header, and with one that only retries (adapts nothing)
        let plain = server.makeProvider(interceptor: RetryPolicy(), sleep: RecordedDelays().sleep)
        await #expect(throws: NetworkError.invalidStatusCode(503)) { _ = try await plain.response(order) }
        server.clearRecordings()
        server.stub(.post, "/v1/orders", .status(503), .status(201))
        let retriesOnly = server.makeProvider(interceptor: Interceptor(retriers: [policy]), sleep: RecordedDelays().sleep)
        await #expect(throws: NetworkError.invalidStatusCode(503)) { _ = try await retriesOnly.response(order) }
        // THEN neither retried it: a request without a key is never repeated
        #expect(server.requests.count == 1)
        #expect(server.requests[0].header("Idempotency-Key") == nil)
    }

    @Test func theKeyIsNoSecretLogsAndCURLShowIt() async throws {
        // GIVEN a provider that logs, and a POST retried once
        let server = MockServer()
        server.stub(.post, "/v1/orders", .status(503), .status(201))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: policy, monitors: [NetworkLogger(verbosity: .verbose, sink: LogSink { lines.append($0) })], sleep: RecordedDelays().sleep)
        // WHEN it is sent
        let response = try await provider.response(TestEndpoint(path: "/orders", method: .post))
        await provider.waitForMonitors()
        // THEN the key is shown as it is, in the log and in the cURL of the request sent
        let key = try #require(server.requests.first?.header("Idempotency-Key"))
        #expect(lines.all.joined(separator: "\n").contains(key))
        #expect(response.request.cURLDescription.contains("Idempotency-Key: \(key)"))
    }
}
