import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Interceptor composition")
struct InterceptorTests {
    let request = URLRequest(url: URL(string: "https://api.example.com/v1/users/1")!)
    let context = RequestContext(endpoint: TestEndpoint())

    @Test func bypassDefaultsLeaveTheRequestAloneAndDoNotRetry() async throws {
        struct Nothing: RequestInterceptor {}
        let adapted = try await Nothing().adapt(request, for: context)
        #expect(adapted == request)
        guard case .doNotRetry = await Nothing().retry(request, dueTo: URLError(.timedOut), response: nil, context: context) else {
            Issue.record("expected doNotRetry")
            return
        }
    }

    @Test func adaptersRunInOrderEachSeeingThePreviousOutput() async throws {
        let log = Recorder<String>()
        let interceptor = Interceptor(adapters: [
            HeaderAdapter(name: "X-Chain", value: "1", log: log),
            HeaderAdapter(name: "X-Chain", value: "2", log: log),
            HeaderAdapter(name: "X-Chain", value: "3", log: log),
        ])
        let adapted = try await interceptor.adapt(request, for: context)
        #expect(adapted.value(forHTTPHeaderField: "X-Chain") == "1,2,3")
        #expect(log.all == ["adapt 1", "adapt 2", "adapt 3"])
    }

    @Test func firstThrowingAdapterStopsTheChain() async {
        struct Refused: Error {}
        let log = Recorder<String>()
        let interceptor = Interceptor(adapters: [
            HeaderAdapter(name: "X-Chain", value: "1", log: log),
            ClosureAdapter { _, _ in throw Refused() },
            HeaderAdapter(name: "X-Chain", value: "3", log: log),
        ])
        await #expect(throws: Refused.self) { try await interceptor.adapt(request, for: context) }
        #expect(log.all == ["adapt 1"])
    }

    @Test func firstAnswerOtherThanDoNotRetryWins() async {
        let log = Recorder<String>()
        let interceptor = Interceptor(retriers: [
            FixedRetrier(result: .doNotRetry, log: log, label: "a"),
            FixedRetrier(result: .retryWithDelay(2), log: log, label: "b"),
            FixedRetrier(result: .retry, log: log, label: "c"),
        ])
        let result = await interceptor.retry(request, dueTo: URLError(.timedOut), response: nil, context: context)
        guard case .retryWithDelay(2) = result else {
            Issue.record("expected retryWithDelay(2), got \(result)")
            return
        }
        #expect(log.all == ["a retry #0 status=0", "b retry #0 status=0"])
    }

    @Test func noRetrierMeansDoNotRetry() async {
        let result = await Interceptor().retry(request, dueTo: URLError(.timedOut), response: nil, context: context)
        guard case .doNotRetry = result else {
            Issue.record("expected doNotRetry")
            return
        }
    }

    @Test func closureInterceptorRunsBothClosures() async throws {
        let interceptor = Interceptor(
            adapter: { request, _ in
                var request = request
                request.setValue("yes", forHTTPHeaderField: "X-Adapted")
                return request
            },
            retrier: { _, _, response, _ in response?.statusCode == 503 ? .retry : .doNotRetry }
        )
        #expect(try await interceptor.adapt(request, for: context).value(forHTTPHeaderField: "X-Adapted") == "yes")
        let http = HTTPURLResponse(url: request.url!, statusCode: 503, httpVersion: nil, headerFields: nil)!
        let result = await interceptor.retry(
            request, dueTo: NetworkError.invalidStatusCode(503),
            response: Response(data: Data(), httpResponse: http, request: request), context: context)
        guard case .retry = result else {
            Issue.record("expected retry")
            return
        }
    }

    @Test func contextKeepsPerCallNotes() {
        context["auth.retried"] = true
        #expect(context["auth.retried"] as? Bool == true)
        #expect(context["other"] == nil)
    }
}
