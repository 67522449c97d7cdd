import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RFC 9110 §9.2.2: a request of a method that is not idempotent may be retried automatically when the
/// client can tell the original request was never applied. A connection that was never made (refused, no
/// such host, no network) carried no request, so a `POST` that failed that way is safe to send again.
@Suite("RetryPolicy: requests that never left")
struct RetryPolicyNeverSentTests {
    func decide(_ policy: RetryPolicy, _ code: URLError.Code, method: HTTPMethod) async -> RetryResult {
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/orders")!)
        request.httpMethod = method.rawValue
        return await policy.retry(
            request, dueTo: NetworkError.transportFailed(URLError(code)), response: nil, context: RequestContext(endpoint: TestEndpoint()))
    }

    func isRetried(_ result: RetryResult) -> Bool {
        if case .retryWithDelay = result { return true }
        return false
    }

    @Test(
        "a POST or PATCH whose connection was never made is retried (RFC 9110 §9.2.2)",
        arguments: [URLError.Code.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet])
    func neverSentIsRetried(code: URLError.Code) async {
        for method in [HTTPMethod.post, .patch] {
            #expect(isRetried(await decide(RetryPolicy(random: { 0 }), code, method: method)), "\(method) \(code)")
        }
    }

    @Test(
        "a POST that may have reached the server is still not retried (RFC 9110 §9.2.2)",
        arguments: [URLError.Code.networkConnectionLost, .timedOut, .secureConnectionFailed])
    func maybeSentIsNotRetried(code: URLError.Code) async {
        guard case .doNotRetry = await decide(RetryPolicy(random: { 0 }), code, method: .post) else {
            Issue.record("POST after \(code) was retried")
            return
        }
    }

    @Test func aCodeTheAppRemovedFromTheRetryableOnesIsNotRetriedEvenForGET() async {
        let policy = RetryPolicy(retryableURLErrorCodes: [.timedOut], random: { 0 })
        for method in [HTTPMethod.post, .get] {
            guard case .doNotRetry = await decide(policy, .cannotConnectToHost, method: method) else {
                Issue.record("\(method) was retried")
                continue
            }
        }
    }

    @Test func aPOSTToAServiceThatIsRestartingIsSentOnceItListens() async throws {
        // GIVEN a dependency that refuses the first connection (restarting), then answers
        let server = MockServer()
        server.stub(.post, "/v1/orders", .failure(URLError(.cannotConnectToHost)), .status(201))
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), sleep: RecordedDelays().sleep)
        // WHEN the service POSTs
        let response = try await provider.response(NeverSentOrder())
        // THEN the call succeeds on the second attempt
        #expect(response.statusCode == 201)
        #expect(server.requests(.post, "/v1/orders").count == 2)
    }
}

private struct NeverSentOrder: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/orders" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["item": 1]) }
    var acceptableStatusCodes: Set<Int> { [201] }
}
