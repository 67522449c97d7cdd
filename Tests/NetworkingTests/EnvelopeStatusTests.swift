import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records the envelope status of each response whose validation failed.
private final class ValidationLog: EventMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int?] = []

    func validationDidFail(_ response: Response, error: any Error, context: RequestContext) {
        lock.lock()
        defer { lock.unlock() }
        statuses.append(response.envelopeStatusCode)
    }

    var envelopeStatuses: [Int?] {
        lock.lock()
        defer { lock.unlock() }
        return statuses
    }
}

/// The status an envelope failure stands for is the one the retriers and the monitors see.
@Suite("Envelopes: the status a failure stands for", SuiteTimeLimit.oneMinute)
struct EnvelopeStatusTests {
    @Test("a Retry-After too long for the RetryPolicy names the status the envelope stands for (RFC 9110 §10.2.3)")
    func aTooLongRetryAfterNamesTheEnvelopeStatus() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E503"}"#, headers: ["Retry-After": "3600"]))
        let provider = envelopedProvider(server, interceptor: RetryPolicy())
        await #expect(throws: NetworkError.retryAfter(seconds: 3600, statusCode: 503)) {
            try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
    }

    @Test func monitorsSeeTheEnvelopeStatusOfAFailedValidation() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E401"}"#))
        let log = ValidationLog()
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral), monitors: [log])
        await #expect(throws: AppAPIError(code: "E401", message: nil, statusCode: 200)) {
            try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
        await provider.events.drain()
        #expect(log.envelopeStatuses == [401])
    }
}

/// An app's retrier, tested as apps test theirs: through the test kit's provider, whose answers carry the
/// envelope status (``Response/envelopeStatusCode`` cannot be set outside the package).
private struct BusyRetrier: RequestInterceptor {
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
        response?.envelopeStatusCode == 503 && context.retryCount == 0 ? .retry : .doNotRetry
    }
}

@Suite("Envelopes: the test kit", SuiteTimeLimit.oneMinute)
struct EnvelopeTestKitTests {
    @Test func aRetrierIsTestedThroughTheMockServersEnvelopedProvider() async throws {
        let server = MockServer()
        server.stub(
            .get, "/v1/users/7", .json(raw: #"{"divisionCode":"E503"}"#), .json(raw: #"{"divisionCode":"0000","data":{"id":7,"name":"Lee"}}"#))
        let provider = server.makeProvider(envelope: EnvelopeFormat(APIEnvelope.self), interceptor: BusyRetrier())
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self) == EnvelopedUser(id: 7, name: "Lee"))
        #expect(server.requests.count == 2)
    }
}
