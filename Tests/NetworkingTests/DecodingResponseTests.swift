// swift-format-ignore-file
// (The first test is the twin of Docs/GettingStarted.md, "A value and its headers": keep it identical to the page.)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct Users: Endpoint {
    let page: Int
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users" }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "page", value: String(page))] }
}

@Suite("Decoding a response the app already has, by request(_:as:)'s rules")
struct DecodingResponseTests {
    @Test func aValueAndItsHeaders() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users", .json([User(id: 1, name: "Kim")], headers: ["X-Total-Count": "41"]))
        let provider = server.makeProvider()

        let response = try await provider.response(Users(page: 2))
        let users = try provider.decode(response, as: [User].self, for: Users(page: 2))
        let total = response.httpResponse.value(forHTTPHeaderField: "X-Total-Count")

        #expect(users == [User(id: 1, name: "Kim")])
        #expect(total == "41")
    }

    @Test func theEnvelopesPayloadAndAKeyPathInsideIt() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users", .json(raw: #"{"divisionCode":"0000","resultMsg":"ok","data":{"users":[{"id":7,"name":"Lee"}]}}"#))
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral))
        let response = try await provider.response(Users(page: 1))
        // the same value request(_:as:atKeyPath:) decodes: the key path is read inside the payload (`data`)
        let users = try provider.decode(response, as: [User].self, for: Users(page: 1), atKeyPath: "users")
        #expect(users == [User(id: 7, name: "Lee")])
        #expect(users == (try await provider.request(Users(page: 1), as: [User].self, atKeyPath: "users", interceptor: nil)))
    }

    @Test func anEmptyBodyAndABodyOfAnotherShape() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users", .status(204), .json(raw: #"{"id":"seven"}"#))
        let provider = server.makeProvider()
        let empty = try await provider.response(Users(page: 1))
        #expect(try provider.decode(empty, as: EmptyResponse.self, for: Users(page: 1)) == EmptyResponse())
        #expect(try provider.decode(empty, as: User?.self, for: Users(page: 1)) == nil)
        let other = try await provider.response(Users(page: 1))
        #expect {
            try provider.decode(other, as: User.self, for: Users(page: 1))
        } throws: { error in
            guard case NetworkError.decodingFailed(let type, _) = error else { return false }
            return type == "User"
        }
    }
}
