import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint that may name a decoder of its own.
private struct DecodingEndpoint: Endpoint {
    var path = "/users/1"
    var method: HTTPMethod = .get
    var decoder: JSONDecoder?

    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
}

/// An item of a list.
private struct Item: Codable, Equatable, Sendable {
    let id: Int
}

/// A value with a date, as an API with ISO-8601 dates sends it.
private struct Event: Decodable, Equatable, Sendable {
    let name: String
    let startsAt: Date
}

@Suite("Decoding", SuiteTimeLimit.oneMinute)
struct DecodingTests {
    // MARK: Empty bodies

    @Test(arguments: [MockResponse.status(204), .status(205), .status(200, headers: ["Content-Length": "0"])])
    func emptyDecodesFromAResponseWithNoBody(answer: MockResponse) async throws {
        // GIVEN a server that answers with no body
        let server = MockServer()
        server.stub(.delete, "/v1/users/1", answer)
        let provider = server.makeProvider()
        // WHEN the body is decoded as EmptyResponse
        let nothing = try await provider.request(DecodingEndpoint(method: .delete), as: EmptyResponse.self)
        // THEN it is the empty value
        #expect(nothing == EmptyResponse())
    }

    @Test func aHEADRequestDecodesAsEmptyOrNilWhateverItsHeadersSay() async throws {
        // GIVEN a server that answers HEAD with the length the body would have
        let server = MockServer()
        server.stub(.head, "/v1/users/1", .status(200, headers: ["Content-Length": "27"]))
        let provider = server.makeProvider()
        // WHEN the answer is decoded as EmptyResponse and as an optional
        let nothing = try await provider.request(DecodingEndpoint(method: .head), as: EmptyResponse.self)
        let user = try await provider.request(DecodingEndpoint(method: .head), as: User?.self)
        // THEN they are the empty value and nil
        #expect(nothing == EmptyResponse())
        #expect(user == nil)
    }

    @Test func emptyDecodesFromAnyJSONBodyAndEncodesAsAnEmptyObject() async throws {
        // GIVEN a server that answers with a JSON body nobody needs
        let server = MockServer()
        server.stub(.post, "/v1/users/1", .json(raw: #"{"ok":true}"#))
        let provider = server.makeProvider()
        // WHEN it is decoded as EmptyResponse, and EmptyResponse is encoded
        let nothing = try await provider.request(DecodingEndpoint(method: .post), as: EmptyResponse.self)
        let encoded = try JSONEncoder().encode(EmptyResponse())
        // THEN decoding succeeds, and EmptyResponse is {}
        #expect(nothing == EmptyResponse())
        #expect(String(decoding: encoded, as: UTF8.self) == "{}")
    }

    @Test(arguments: [204, 205])
    func anOptionalDecodesAsNilFromAResponseWithNoBody(status: Int) async throws {
        // GIVEN a server that answers with no body
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(status))
        let provider = server.makeProvider()
        // WHEN the body is decoded as an optional
        let user = try await provider.request(DecodingEndpoint(), as: User?.self)
        // THEN it is nil, not a decoding failure
        #expect(user == nil)
    }

    @Test func anOptionalDecodesAsNilFromAZeroLengthOKBody() async throws {
        // GIVEN a 200 that declares and sends no body
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(200, headers: ["Content-Length": "0"]))
        let provider = server.makeProvider()
        // WHEN the body is decoded as an optional
        let user = try await provider.request(DecodingEndpoint(), as: User?.self)
        // THEN it is nil
        #expect(user == nil)
    }

    @Test func aValueThatIsNotOptionalFailsClearlyOnAnEmptyBody() async throws {
        // GIVEN a server that answers 204
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(204))
        let provider = server.makeProvider()
        // WHEN the body is decoded as a user
        let error = await #expect(throws: NetworkError.self) {
            try await provider.request(DecodingEndpoint(), as: User.self)
        }
        // THEN the failure names the type and says the body was empty, not that data was corrupted
        guard case .decodingFailed(let type, _)? = error else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(type == "User")
        let description = try #require(error?.description)
        #expect(description.contains("empty"))
        #expect(!description.contains("corrupted"))
    }

    @Test func aNonEmptyBodyStillDecodesIntoAnOptional() async throws {
        // GIVEN a server that answers with a user
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        let provider = server.makeProvider()
        // WHEN the body is decoded as an optional user
        let user = try await provider.request(DecodingEndpoint(), as: User?.self)
        // THEN it is the user
        #expect(user == User(id: 1, name: "Kim"))
    }

    // MARK: A decoder per endpoint

    @Test func anEndpointsOwnDecoderDecodesItsBodyAndOnlyItsBody() async throws {
        // GIVEN an API that sends ISO-8601 dates, and a provider with the default decoder
        let server = MockServer()
        server.stub(.get, "/v1/events/1", .json(raw: #"{"name":"Launch","startsAt":"2026-01-02T03:04:05Z"}"#))
        let provider = server.makeProvider()
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        // WHEN one endpoint names an ISO-8601 decoder and another does not
        let event = try await provider.request(DecodingEndpoint(path: "/events/1", decoder: iso), as: Event.self)
        let error = await #expect(throws: NetworkError.self) {
            try await provider.request(DecodingEndpoint(path: "/events/1"), as: Event.self)
        }
        // THEN the endpoint's decoder read the date, and the other call used the provider's
        #expect(event == Event(name: "Launch", startsAt: Date(timeIntervalSince1970: 1_767_323_045)))
        guard case .decodingFailed(let type, _)? = error else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(type == "Event")
    }

    // MARK: Decoding at a key path

    @Test func aNestedObjectAndANestedArrayDecodeAtTheirKeyPaths() async throws {
        // GIVEN an API that wraps its answers in an envelope
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"status":200,"data":{"user":{"id":7,"name":"Lee"}}}"#))
        server.stub(.get, "/v1/items", .json(raw: #"{"status":200,"data":{"items":[{"id":1},{"id":2}]}}"#))
        let provider = server.makeProvider()
        // WHEN the values are decoded at their key paths
        let user = try await provider.request(DecodingEndpoint(), as: User.self, atKeyPath: "data.user")
        let items = try await provider.request(DecodingEndpoint(path: "/items"), as: [Item].self, atKeyPath: "data.items")
        // THEN each is the value inside the envelope
        #expect(user == User(id: 7, name: "Lee"))
        #expect(items == [Item(id: 1), Item(id: 2)])
    }

    @Test func aMissingKeyFailsNamingThePathAndNoValue() async throws {
        // GIVEN an envelope without the user, with a secret beside it
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"data":{"token":"s3cr3t-value"}}"#))
        let provider = server.makeProvider()
        // WHEN the user is decoded at its key path
        let error = await #expect(throws: NetworkError.self) {
            try await provider.request(DecodingEndpoint(), as: User.self, atKeyPath: "data.user")
        }
        // THEN the failure names the type, the key path and the missing key, and no value
        guard case .decodingFailed(let type, _)? = error else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(type == #"User at key path "data.user""#)
        let description = try #require(error?.description)
        #expect(description.contains(#"missing key "user" at data"#))
        #expect(!description.contains("s3cr3t"))
    }

    @Test func aValueOfTheWrongTypeOnThePathFailsNamingThePathAndNoValue() async throws {
        // GIVEN an envelope whose data is a string, not an object
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"data":"s3cr3t-value"}"#))
        let provider = server.makeProvider()
        // WHEN the user is decoded at its key path
        let error = await #expect(throws: NetworkError.self) {
            try await provider.request(DecodingEndpoint(), as: User.self, atKeyPath: "data.user")
        }
        // THEN it fails as a decoding failure at data, without the value
        guard case .decodingFailed(let type, .typeMismatch)? = error else {
            Issue.record("expected decodingFailed with a type mismatch, got \(String(describing: error))")
            return
        }
        #expect(type == #"User at key path "data.user""#)
        let description = try #require(error?.description)
        #expect(description.contains("at data"))
        #expect(!description.contains("s3cr3t"))
    }

    @Test func theKeyPathUsesTheEndpointsDecoderAndItsStrategies() async throws {
        // GIVEN a snake_case API with ISO-8601 dates, and an endpoint whose decoder reads both
        let server = MockServer()
        server.stub(.get, "/v1/events/1", .json(raw: #"{"data":{"next_event":{"name":"Launch","starts_at":"2026-01-02T03:04:05Z"}}}"#))
        let provider = server.makeProvider()
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        // WHEN the event is decoded at its key path, written with the converted names
        let event = try await provider.request(
            DecodingEndpoint(path: "/events/1", decoder: decoder), as: Event.self, atKeyPath: "data.nextEvent")
        // THEN the strategies applied to the path and to the value
        #expect(event == Event(name: "Launch", startsAt: Date(timeIntervalSince1970: 1_767_323_045)))
    }

    @Test func aNullOrAnEmptyBodyDecodesAsNilIntoAnOptionalAtAKeyPath() async throws {
        // GIVEN a server that answers with a null user, then with no body
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"data":{"user":null}}"#), .status(204))
        let provider = server.makeProvider()
        // WHEN an optional user is decoded at its key path twice
        let fromNull = try await provider.request(DecodingEndpoint(), as: User?.self, atKeyPath: "data.user")
        let fromNothing = try await provider.request(DecodingEndpoint(), as: User?.self, atKeyPath: "data.user")
        // THEN both are nil
        #expect(fromNull == nil)
        #expect(fromNothing == nil)
    }

    @Test func anEmptyKeyPathDecodesTheWholeBodyAndThePerCallVariantsShareTheRule() async throws {
        // GIVEN a server that is busy once, then answers in an envelope
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(raw: #"{"data":{"id":7,"name":"Lee"}}"#))
        let provider = server.makeProvider(sleep: RecordedDelays().sleep)
        // WHEN the user is decoded with a per-call retrier, and the whole body at an empty path
        let user = try await provider.request(DecodingEndpoint(), as: User.self, atKeyPath: "data", retrier: RetryPolicy())
        let whole = try await provider.request(DecodingEndpoint(), as: [String: User].self, atKeyPath: "")
        // THEN both decode
        #expect(user == User(id: 7, name: "Lee"))
        #expect(whole == ["data": User(id: 7, name: "Lee")])
    }

    @Test func aFakeProviderThatDecodesInTheCallingTaskSupportsKeyPaths() async throws {
        // GIVEN a fake of NetworkProviding that decodes a fixed body with a plain JSONDecoder
        let fake = FixedBodyProvider(body: Data(#"{"data":{"user":{"id":7,"name":"Lee"}}}"#.utf8))
        // WHEN a user is decoded at its key path through it
        let user = try await fake.request(DecodingEndpoint(), as: User.self, atKeyPath: "data.user")
        // THEN the fake needed nothing more than its one requirement
        #expect(user == User(id: 7, name: "Lee"))
    }

    @Test func aFakeThatImplementsTheKeyPathRequirementServesKeyPathCallsWithItsOwnValues() async throws {
        // GIVEN a fake that returns stubbed values, seen through the protocol as a repository sees it
        let fake: any NetworkProviding = StubbedValuesProvider()
        // WHEN a repository asks for a value at a key path
        let user = try await fake.request(DecodingEndpoint(), as: User.self, atKeyPath: "data.user")
        // THEN the fake's own implementation answered (no type of the package's own reached it)
        #expect(user == User(id: 1, name: "stub for data.user"))
    }

    @Test(arguments: [" ", "\n", " \r\n\t "])
    func aBodyOfOnlyWhiteSpaceCountsAsEmpty(_ body: String) async throws {
        // GIVEN a 200 whose body is only a bare newline or spaces, as some servers send
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse(statusCode: 200, body: Data(body.utf8)))
        let provider = server.makeProvider()
        // WHEN it is decoded as an optional and as EmptyResponse
        // THEN both succeed, as for zero bytes
        #expect(try await provider.request(DecodingEndpoint(), as: User?.self) == nil)
        #expect(try await provider.request(DecodingEndpoint(), as: EmptyResponse.self) == EmptyResponse())
    }

    @Test(arguments: ["data..user", ".data.user", "data.user.", "."])
    func aKeyPathWithAnEmptyKeyFailsSayingSo(_ keyPath: String) async throws {
        // GIVEN a body with the value at data.user
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"data":{"user":{"id":7,"name":"Lee"}}}"#))
        // WHEN it is asked for at a key path with an empty key
        // THEN the error says the key path is invalid, not that a key "" is missing
        do {
            _ = try await server.makeProvider().request(DecodingEndpoint(), as: User.self, atKeyPath: keyPath)
            Issue.record("decoded at \(keyPath)")
        } catch let error as NetworkError {
            #expect(error.description.contains("empty key"))
        }
    }
}

/// A fake as apps write one for repositories: stubbed values, no decoding at all.
private struct StubbedValuesProvider: NetworkProviding {
    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        throw URLError(.unsupportedURL)   // a key-path call must not come here
    }

    func request<T: Decodable>(
        _ endpoint: some Endpoint, as type: T.Type, atKeyPath keyPath: String, interceptor: (any RequestInterceptor)?
    ) async throws -> T {
        guard let user = User(id: 1, name: "stub for \(keyPath)") as? T else { throw URLError(.unsupportedURL) }
        return user
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        throw URLError(.unsupportedURL)
    }
}

/// A fake provider, as an app writes one: every call answers `body`, decoded with a plain decoder.
private struct FixedBodyProvider: NetworkProviding {
    let body: Data

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try JSONDecoder().decode(type, from: body)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        throw URLError(.unsupportedURL)
    }
}
