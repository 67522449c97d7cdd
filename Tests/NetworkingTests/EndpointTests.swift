import Foundation
import Networking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Endpoint → URLRequest")
struct EndpointTests {
    @Test(
        "path joining neither doubles nor drops slashes",
        arguments: [
            ("https://api.x.com/v1/", "/users/1"),
            ("https://api.x.com/v1/", "users/1"),
            ("https://api.x.com/v1", "/users/1"),
            ("https://api.x.com/v1", "users/1"),
        ])
    func joining(base: String, path: String) throws {
        let endpoint = TestEndpoint(baseURL: URL(string: base)!, path: path)
        #expect(try endpoint.url().absoluteString == "https://api.x.com/v1/users/1")
    }

    @Test(
        "a base URL's query goes after the joined path (the endpoint's items after it), its fragment last; a '?' in the fragment is the fragment's (RFC 3986 §3.5)",
        arguments: [
            ("https://api.x.com/v1?key=1#top", [URLQueryItem(name: "a", value: "b")], "https://api.x.com/v1/users?key=1&a=b#top"),
            ("https://api.x.com/v1?key=1", [], "https://api.x.com/v1/users?key=1"),
            ("https://api.x.com/v1?", [URLQueryItem(name: "a", value: "b")], "https://api.x.com/v1/users?a=b"),
            ("https://api.x.com/v1#part?not-a-query", [], "https://api.x.com/v1/users#part?not-a-query"),
            ("https://api.x.com/v1#part?x", [URLQueryItem(name: "a", value: "b")], "https://api.x.com/v1/users?a=b#part?x"),
        ])
    func baseQueryAndFragment(base: String, items: [URLQueryItem], expected: String) throws {
        let endpoint = TestEndpoint(baseURL: URL(string: base)!, path: "users", queryItems: items)
        #expect(try endpoint.url().absoluteString == expected)
    }

    @Test func emptyPathKeepsBaseURL() throws {
        let endpoint = TestEndpoint(baseURL: URL(string: "https://api.x.com/v1/")!, path: "")
        #expect(try endpoint.url().absoluteString == "https://api.x.com/v1/")
    }

    @Test func hostOnlyBaseURL() throws {
        let endpoint = TestEndpoint(baseURL: URL(string: "https://api.x.com")!, path: "health")
        #expect(try endpoint.url().absoluteString == "https://api.x.com/health")
    }

    @Test func pathIsEscaped() throws {
        let endpoint = TestEndpoint(path: "/users/홍길동/a b")
        let url = try endpoint.url()
        #expect(url.absoluteString == "https://api.example.com/v1/users/%ED%99%8D%EA%B8%B8%EB%8F%99/a%20b")
        #expect(url.path == "/v1/users/홍길동/a b")
    }

    @Test(
        "query values are percent-encoded and decode back to what was given",
        arguments: [
            "a+b", "a&b=c", "x/y?z", "hello world", "🙂👍", "안녕하세요", "100%", "#frag",
        ])
    func queryEncoding(value: String) throws {
        // GIVEN a query value with characters that mean something in a URL
        let endpoint = TestEndpoint(queryItems: [URLQueryItem(name: "q", value: value), URLQueryItem(name: "n", value: "1")])
        // WHEN the URL is built
        let url = try endpoint.url()
        // THEN the raw query holds only unreserved characters and escapes, and parses back exactly
        let rawQuery = try #require(url.query)
        #expect(!rawQuery.dropFirst(2).prefix(while: { $0 != "&" }).contains { "+&=/?# ".contains($0) })
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems
        #expect(items == [URLQueryItem(name: "q", value: value), URLQueryItem(name: "n", value: "1")])
    }

    @Test func plusIsNotASpace() throws {
        let url = try TestEndpoint(queryItems: [URLQueryItem(name: "phone", value: "+82 10")]).url()
        #expect(url.query == "phone=%2B82%2010")
    }

    @Test func queryIsAppendedToBaseQuery() throws {
        let endpoint = TestEndpoint(
            baseURL: URL(string: "https://api.x.com/v1?lang=ko")!, path: "/items",
            queryItems: [URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "flag", value: nil)])
        #expect(try endpoint.url().absoluteString == "https://api.x.com/v1/items?lang=ko&page=2&flag")
    }

    @Test func unbuildableBaseURLThrowsInvalidURL() {
        let endpoint = TestEndpoint(baseURL: URL(string: "no-scheme-here")!, path: "/x")
        #expect {
            try endpoint.urlRequest()
        } throws: { error in
            guard case NetworkError.invalidURL(let reason) = error else { return false }
            return reason.contains("scheme or host")
        }
    }

    @Test func methodHeadersAndTimeout() throws {
        let endpoint = TestEndpoint(method: .delete, headers: ["X-Trace": "abc"], timeout: 7)
        let request = try endpoint.urlRequest()
        #expect(request.httpMethod == "DELETE")
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "abc")
        #expect(request.timeoutInterval == 7)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func jsonBodyUsesTheGivenEncoderAndSetsContentType() throws {
        struct SignUp: Encodable, Sendable { let firstName: String }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let request = try TestEndpoint(method: .post, body: .json(SignUp(firstName: "Kim"))).urlRequest(encoder: encoder)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(String(decoding: try #require(request.httpBody), as: UTF8.self) == #"{"first_name":"Kim"}"#)
    }

    @Test func perEndpointEncoderWinsOverProviderEncoder() throws {
        struct Payload: Encodable, Sendable { let createdAt: Date }
        let endpointEncoder = JSONEncoder()
        endpointEncoder.dateEncodingStrategy = .secondsSince1970
        let request = try TestEndpoint(body: .json(Payload(createdAt: Date(timeIntervalSince1970: 10)), encoder: endpointEncoder))
            .urlRequest(encoder: JSONEncoder())
        #expect(String(decoding: try #require(request.httpBody), as: UTF8.self) == #"{"createdAt":10}"#)
    }

    @Test func endpointContentTypeWins() throws {
        let request = try TestEndpoint(headers: ["Content-Type": "application/vnd.api+json"], body: .json(["a": 1])).urlRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
    }

    @Test func rawDataBody() throws {
        let bytes = Data([0, 1, 2, 255])
        let request = try TestEndpoint(method: .put, body: .data(bytes, contentType: "application/octet-stream")).urlRequest()
        #expect(request.httpBody == bytes)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
    }

    @Test func formBodyIsURLEncoded() throws {
        let request = try TestEndpoint(method: .post, body: .form(["grant_type": "refresh_token", "note": "a+b & c=d 한"])).urlRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
        let body = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(body == "grant_type=refresh_token&note=a%2Bb%20%26%20c%3Dd%20%ED%95%9C")
    }

    @Test func encodingFailureCarriesTheUnderlyingError() {
        // Double.nan cannot be encoded by JSONEncoder's default strategy.
        let endpoint = TestEndpoint(method: .post, body: .json(["value": Double.nan]))
        #expect {
            try endpoint.urlRequest()
        } throws: { error in
            guard case NetworkError.encodingFailed(let underlying) = error else { return false }
            return underlying is EncodingError
        }
    }

    @Test func moyaStyleEnumConforms() throws {
        enum API: Endpoint {
            case user(id: Int)
            case search(String)
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String {
                switch self {
                case .user(let id): return "/users/\(id)"
                case .search: return "/users/search"
                }
            }
            var queryItems: [URLQueryItem] {
                guard case .search(let text) = self else { return [] }
                return [URLQueryItem(name: "q", value: text)]
            }
        }
        #expect(try API.user(id: 3).url().absoluteString == "https://api.example.com/users/3")
        #expect(try API.search("kim lee").url().absoluteString == "https://api.example.com/users/search?q=kim%20lee")
        #expect(API.user(id: 3).method == .get)
        #expect(API.user(id: 3).acceptableStatusCodes == Set(200..<300))
        #expect(API.user(id: 3).requiresAuthentication)
    }

    @Test func httpMethodIsAnOpenSet() {
        let purge: HTTPMethod = "PURGE"
        #expect(purge.rawValue == "PURGE")
        #expect(HTTPMethod.get.isIdempotent && HTTPMethod.put.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent && !HTTPMethod.patch.isIdempotent && !purge.isIdempotent)
    }
}
