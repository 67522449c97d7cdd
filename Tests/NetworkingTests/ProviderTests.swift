import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("NetworkProvider pipeline")
struct ProviderTests {
    let endpoint = TestEndpoint()

    @Test func decodesTheBody() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        let user = try await server.makeProvider().request(endpoint, as: User.self)
        #expect(user == User(id: 1, name: "Kim"))
    }

    @Test func rawResponseCarriesStatusHeadersAndTheRequestAsSent() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse(statusCode: 201, headers: ["ETag": "v7"], body: Data("hi".utf8)))
        let provider = server.makeProvider(interceptor: HeaderAdapter(name: "X-Client", value: "test"))
        let response = try await provider.response(endpoint)
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "etag") == "v7")
        #expect(response.data == Data("hi".utf8))
        #expect(response.request.value(forHTTPHeaderField: "X-Client") == "test")
    }

    @Test func emptyBodyVariantFor204() async throws {
        let server = MockServer()
        server.stub(.delete, "/v1/users/1", .status(204))
        try await server.makeProvider().request(TestEndpoint(method: .delete))
        #expect(server.requests(.delete, "/v1/users/1").count == 1)
    }

    @Test func providerEncoderIsUsedForJSONBodies() async throws {
        struct Payload: Encodable, Sendable { let userName: String }
        let server = MockServer()
        server.stub(.post, "/v1/users/1", .status(204))
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try await server.makeProvider(encoder: encoder).request(TestEndpoint(method: .post, body: .json(Payload(userName: "kim"))))
        #expect(String(decoding: try #require(server.requests.first).body, as: UTF8.self) == #"{"user_name":"kim"}"#)
    }

    @Test func unacceptableStatusThrowsInvalidStatusCode() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(404))
        await #expect {
            _ = try await server.makeProvider().request(endpoint, as: User.self)
        } throws: { error in
            guard case NetworkError.invalidStatusCode(404) = error else { return false }
            return true
        }
    }

    @Test func endpointCanAcceptOtherStatusCodes() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(304))
        let response = try await server.makeProvider().response(TestEndpoint(acceptableStatusCodes: [200, 304]))
        #expect(response.statusCode == 304)
        // and 2xx outside the endpoint's set is rejected
        server.stub(.get, "/v1/users/1", .status(204))
        await #expect(throws: NetworkError.self) {
            try await server.makeProvider().response(TestEndpoint(acceptableStatusCodes: [200, 304]))
        }
    }

    @Test func transportFailureCarriesTheURLErrorCode() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .failure(URLError(.notConnectedToInternet)))
        await #expect {
            try await server.makeProvider().response(endpoint)
        } throws: { error in
            guard case NetworkError.transportFailed(let urlError) = error else { return false }
            return urlError.code == .notConnectedToInternet
        }
    }

    @Test func decodingFailureNamesTheType() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"id":"one","name":"Kim"}"#))
        await #expect {
            _ = try await server.makeProvider().request(endpoint, as: User.self)
        } throws: { error in
            guard case NetworkError.decodingFailed(let type, .typeMismatch) = error else { return false }
            return type == "User" && "\(error)".contains("User") && "\(error)".contains("id")
        }
    }

    @Test func adaptRunsBeforeEverySendFromTheBuiltRequest() async throws {
        // GIVEN an adapter that appends to a header, and a server that fails twice then succeeds
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .status(503), .json(User(id: 1, name: "Kim")))
        let log = Recorder<String>()
        let interceptor = Interceptor(
            adapters: [HeaderAdapter(name: "X-Trace", value: "a", log: log)],
            retriers: [FixedRetrier(result: .retry, log: log)]
        )
        // WHEN the request is sent
        let user = try await server.makeProvider(interceptor: interceptor).request(endpoint, as: User.self)
        // THEN every attempt was adapted before it was sent, from the request as built (not stacked)
        #expect(user.id == 1)
        #expect(log.all == ["adapt a", "retrier retry #0 status=503", "adapt a", "retrier retry #1 status=503", "adapt a"])
        #expect(server.requests.map { $0.header("X-Trace") } == ["a", "a", "a"])
    }

    @Test func hardCapHoldsAgainstARetrierThatAlwaysRetries() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(500))
        let provider = server.makeProvider(interceptor: FixedRetrier(result: .retry), maximumAttempts: 4)
        await #expect {
            try await provider.response(endpoint)
        } throws: { error in
            guard case NetworkError.tooManyAttempts(4, let last) = error,
                case NetworkError.invalidStatusCode(500) = last
            else { return false }
            return true
        }
        #expect(server.requests.count == 4)
    }

    @Test func defaultCapIsSixAttempts() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .failure(URLError(.timedOut)))
        await #expect(throws: NetworkError.self) {
            try await server.makeProvider(interceptor: FixedRetrier(result: .retry)).response(endpoint)
        }
        #expect(server.requests.count == NetworkProvider.defaultMaximumAttempts)
        #expect(NetworkProvider.defaultMaximumAttempts == 6)
    }

    @Test func retryWithDelayWaitsAtLeastTheDelay() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let retrier = Interceptor(
            adapters: [],
            retriers: [
                ClosureRetrier { _, _, _, context in
                    context.retryCount == 0 ? .retryWithDelay(0.3) : .doNotRetry
                }
            ])
        let start = Date()
        _ = try await server.makeProvider(interceptor: retrier).request(endpoint, as: User.self)
        // A sleep never ends early, so the lower bound is exact; no upper bound is asserted.
        #expect(Date().timeIntervalSince(start) >= 0.3)
        #expect(server.requests.count == 2)
    }

    @Test func doNotRetryWithErrorThrowsTheNewError() async {
        struct Maintenance: Error {}
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503))
        await #expect(throws: Maintenance.self) {
            try await server.makeProvider(interceptor: FixedRetrier(result: .doNotRetryWithError(Maintenance()))).response(endpoint)
        }
    }

    @Test func adapterErrorIsOfferedToTheRetrierAndNothingIsSent() async {
        struct NoKey: Error {}
        let server = MockServer()
        let log = Recorder<String>()
        let interceptor = Interceptor(
            adapters: [ClosureAdapter { _, _ in throw NoKey() }],
            retriers: [FixedRetrier(result: .doNotRetry, log: log)]
        )
        await #expect(throws: NoKey.self) {
            try await server.makeProvider(interceptor: interceptor).response(endpoint)
        }
        #expect(server.requests.isEmpty)
        #expect(log.all == ["retrier retry #0 status=0"])
    }

    @Test func providerInterceptorRunsBeforeTheCallInterceptor() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(500), .status(204))
        let log = Recorder<String>()
        let providerWide = Interceptor(
            adapters: [HeaderAdapter(name: "X-Order", value: "provider", log: log)],
            retriers: [FixedRetrier(result: .doNotRetry, log: log, label: "provider")]
        )
        let perCall = Interceptor(
            adapters: [HeaderAdapter(name: "X-Order", value: "call", log: log)],
            retriers: [FixedRetrier(result: .retry, log: log, label: "call")]
        )
        _ = try await server.makeProvider(interceptor: providerWide).response(endpoint, interceptor: perCall)
        #expect(server.requests.first?.header("X-Order") == "provider,call")
        #expect(log.all.prefix(4) == ["adapt provider", "adapt call", "provider retry #0 status=500", "call retry #0 status=500"])
    }

    @Test func errorMapperTurnsTheEnvelopeIntoADomainErrorCarryingTokens() async {
        // GIVEN a backend that reports "sign-up not completed" in a 400 body with tokens
        let server = MockServer()
        server.stub(
            .post, "/v1/auth/sign-in",
            .json(
                raw: """
                    {"status":400,"divisionCode":"E009","message":"Not Completed SignUp Exception",\
                    "data":{"jwtToken":{"accessToken":"a","refreshToken":"r"}}}
                    """, statusCode: 400))
        let provider = server.makeProvider(errorMapper: ServerError.mapper)
        // WHEN signing in
        // THEN the caller gets the domain error, tokens included (ServerError: Docs/Authentication.md)
        await #expect {
            try await provider.response(TestEndpoint(path: "/auth/sign-in", method: .post))
        } throws: { error in
            guard let error = error as? ServerError else { return false }
            return error.divisionCode == "E009" && error.message == "Not Completed SignUp Exception"
                && error.incompleteSignUpCredential == Credential(accessToken: "a", refreshToken: "r")
        }
    }

    @Test func errorMapperReturningNilKeepsInvalidStatusCode() async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: "<html>bad gateway</html>", statusCode: 502))
        await #expect {
            try await server.makeProvider(errorMapper: ServerError.mapper).response(endpoint)
        } throws: { error in
            guard case NetworkError.invalidStatusCode(502) = error else { return false }
            return true
        }
    }

    @Test func cancellingTheCallerStopsTheTaskAndNeverRetries() async throws {
        // GIVEN a server that answers only after a minute, and a retrier that would always retry
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 60))
        let log = Recorder<String>()
        let provider = server.makeProvider(interceptor: FixedRetrier(result: .retry, log: log))
        let call = Task { try await provider.response(endpoint) }
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        // WHEN the calling task is cancelled mid-request
        call.cancel()
        // THEN it ends with a cancellation error, the protocol was stopped, and nothing was retried
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(server.interruptedCount == 1)
        #expect(server.requests.count == 1)
        #expect(log.all.isEmpty)
    }

    @Test func cancellingDuringARetryDelayEndsTheWait() async {
        let server = MockServer()
        let failed = Signal()
        server.stub(.get, "/v1/users/1") { _ in .status(503) }
        let retrier = Interceptor(
            adapters: [],
            retriers: [
                ClosureRetrier { _, _, _, _ in
                    failed.fire()
                    return .retryWithDelay(60)
                }
            ])
        let provider = server.makeProvider(interceptor: retrier)
        let call = Task { try await provider.response(endpoint) }
        await failed.wait()
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(server.requests.count == 1)
    }

    @Test func thousandConcurrentRequestsThroughAnInterceptor() async throws {
        // GIVEN a server that echoes the adapted header back with the path's id
        let server = MockServer()
        server.stub { request in
            let id = Int(request.path.split(separator: "/").last ?? "") ?? -1
            return .json(User(id: id, name: request.header("X-Client") ?? "missing"))
        }
        let provider = server.makeProvider(interceptor: HeaderAdapter(name: "X-Client", value: "app"))
        // WHEN 1,000 requests run at once
        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for id in 0..<1_000 {
                group.addTask { try await provider.request(TestEndpoint(path: "/users/\(id)"), as: User.self) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // THEN each got its own answer, adapted
        #expect(users.count == 1_000)
        #expect(Set(users.map(\.id)) == Set(0..<1_000))
        #expect(users.allSatisfy { $0.name == "app" })
        #expect(server.requests.count == 1_000)
    }

    @Test func mockServersAreIsolatedFromEachOther() async throws {
        let first = MockServer()
        let second = MockServer()
        first.stub(.get, "/v1/users/1", .json(User(id: 1, name: "first")))
        second.stub(.get, "/v1/users/1", .json(User(id: 1, name: "second")))
        async let a = first.makeProvider().request(endpoint, as: User.self)
        async let b = second.makeProvider().request(endpoint, as: User.self)
        #expect(try await a.name == "first")
        #expect(try await b.name == "second")
        #expect(first.requests.count == 1 && second.requests.count == 1)
        #expect(first.requests[0].header(MockURLProtocol.serverHeader) == nil)
    }

    @Test func unstubbedRequestGets404NamingIt() async throws {
        let server = MockServer()
        let response = try await server.makeProvider().response(TestEndpoint(acceptableStatusCodes: [404]))
        #expect(String(decoding: response.data, as: UTF8.self) == "MockServer: no stub for GET /v1/users/1")
    }
}
