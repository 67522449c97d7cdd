// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Envelopes.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

/// `{"divisionCode": "0000", "resultMsg": "OK", "data": {…}}` around every answer.
struct ShopEnvelope: ResponseEnvelope {
    let divisionCode: String
    let resultMsg: String?

    func failure(statusCode: Int) -> EnvelopeFailure? {
        switch divisionCode {
        case "0000":
            return nil
        case "E401":   // the access token expired: refresh, as for a 401
            return EnvelopeFailure(ShopError(code: divisionCode, message: resultMsg, status: statusCode), standsForStatus: 401)
        case "E503":   // busy: a RetryPolicy retries it, as a 503
            return EnvelopeFailure(ShopError(code: divisionCode, message: resultMsg, status: statusCode), standsForStatus: 503)
        default:
            return EnvelopeFailure(ShopError(code: divisionCode, message: resultMsg, status: statusCode))
        }
    }
}

/// The app's own error: the envelope's code and message, and the HTTP status that carried them.
struct ShopError: Error, Equatable {
    let code: String
    let message: String?
    let status: Int
}

func makeShopProvider(auth: AuthInterceptor) -> NetworkProvider {
    NetworkProvider(envelope: EnvelopeFormat(ShopEnvelope.self), interceptor: Interceptor(interceptors: [auth, RetryPolicy()]))
}

enum StoreAPI: Endpoint {
    case order(id: Int)
    case receipt(id: Int)   // a PDF: no envelope
    case legacyOrders       // an old service: {"code": 0, "result": {…}}

    var baseURL: URL { URL(string: "https://shop.example.com/api/")! }
    var path: String {
        switch self {
        case let .order(id): return "/orders/\(id)"
        case let .receipt(id): return "/orders/\(id)/receipt"
        case .legacyOrders: return "/v0/orders"
        }
    }
    var envelope: EnvelopeFormat? {
        switch self {
        case .order: return nil   // the provider's
        case .receipt: return .unwrapped
        case .legacyOrders: return EnvelopeFormat(LegacyStoreEnvelope.self, payloadKeyPath: "result")
        }
    }
}

struct LegacyStoreEnvelope: ResponseEnvelope {
    let code: Int
    func failure(statusCode: Int) -> EnvelopeFailure? {
        code == 0 ? nil : EnvelopeFailure(ShopError(code: String(code), message: nil, status: statusCode))
    }
}

struct StoreOrder: Decodable, Equatable {
    let id: Int
    let total: Int
}

func orderCalls(_ network: any NetworkProviding) async throws {
    let order = try await network.request(StoreAPI.order(id: 7), as: StoreOrder.self)                   // data
    let total = try await network.request(StoreAPI.order(id: 7), as: Int.self, atKeyPath: "total")   // data.total
    _ = try await network.request(StoreAPI.order(id: 7), as: EmptyResponse.self)                    // data ignored, or absent
    _ = (order, total)
}

func placeOrder(_ network: any NetworkProviding) async -> String {
    do {
        let order = try await network.request(StoreAPI.order(id: 7), as: StoreOrder.self)
        return "order \(order.id)"
    } catch let error as ShopError {
        return "\(error.code): \(error.message ?? "") (HTTP \(error.status))"   // "E102: sold out (HTTP 200)"
    } catch {
        return "failed: \(error)"   // NetworkError: offline, decodingFailed naming a field, invalidStatusCode(502), …
    }
}

/// The auth server's token endpoint: plain OAuth JSON, no envelope.
struct OAuthTokenRefresh: Endpoint {
    let refreshToken: String
    var baseURL: URL { URL(string: "https://auth.example.com/")! }
    var path: String { "/oauth/token" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["grant_type": "refresh_token", "refresh_token": refreshToken]) }
    var envelope: EnvelopeFormat? { .unwrapped }
}

struct StorePhotoUpload: Endpoint {
    let photo: URL
    var baseURL: URL { URL(string: "https://shop.example.com/api/")! }
    var path: String { "/photos" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .multipart(MultipartForm([.text("title", "Beach"), .file("photo", at: photo)])) }
}

struct StorePhoto: Decodable, Equatable {
    let id: Int
}

func uploadPhoto(_ network: any NetworkProviding, at url: URL) async throws -> StorePhoto {
    let (progress, reporter) = TransferProgress.makeStream()
    Task { for await update in progress { print(update.completedBytes) } }
    return try await network.upload(StorePhotoUpload(photo: url), as: StorePhoto.self, progress: reporter)
}

@Suite("Docs/Envelopes.md snippets")
struct EnvelopesDocSnippetTests {
    @Test func anExpiredTokenInsideA200IsRefreshed() async throws {
        struct Wrapped<Payload: Encodable>: Encodable {
            let divisionCode: String
            let data: Payload
        }
        // The API answers in the envelope: tokens in `data`, an expired token as E401 inside a 200
        let api = MockAuthServer(
            tokenExchange: MockAuthServer.TokenExchange(
                answer: .init(accessTokenField: "data.accessToken", refreshTokenField: "data.refreshToken", fixedFields: ["divisionCode": "0000"]),
                rejection: MockAuthServer.Rejection(statusCode: 200, body: #"{"divisionCode":"E401","resultMsg":"refresh token expired"}"#)))
        api.setProtectedResponses(
            resource: { .json(Wrapped(divisionCode: "0000", data: $0)) },
            expired: .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#))
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, network in
            let tokens = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(ShopEnvelope.self), configuration: api.mock.makeConfiguration(basedOn: .ephemeral), interceptor: auth)

        let resource = try await provider.request(api.resource("/orders/7"), as: MockAuthServer.Resource.self)
        #expect(resource.token == "access-1")
        #expect(api.refreshCount == 1)
    }

    /// The page's provider on a mock server.
    func shop(_ server: MockServer) -> NetworkProvider {
        let auth = AuthInterceptor(baseURL: URL(string: "https://shop.example.com/api/")!, store: InMemoryCredentialStore(Credential(accessToken: "a", refreshToken: "r"))) { credential, _ in credential }
        let provider = makeShopProvider(auth: auth)
        #expect(provider.envelope?.payloadKeyPath == "data")
        return NetworkProvider(envelope: EnvelopeFormat(ShopEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral), interceptor: Interceptor(interceptors: [auth, RetryPolicy()]), sleep: { _ in })
    }

    @Test func theCallsDecodeThePayload() async throws {
        let server = MockServer()
        server.stub(.get, "/api/orders/7", .json(raw: #"{"divisionCode":"0000","resultMsg":"OK","data":{"id":7,"total":12000}}"#))
        let provider = shop(server)
        try await orderCalls(provider)
        #expect(try await provider.request(StoreAPI.order(id: 7), as: Int.self, atKeyPath: "total") == 12000)
        #expect(await placeOrder(provider) == "order 7")
    }

    @Test func aFailureInsideA200IsTheAppsError() async throws {
        let server = MockServer()
        server.stub(.get, "/api/orders/7", .json(raw: #"{"divisionCode":"E102","resultMsg":"sold out"}"#))
        #expect(await placeOrder(shop(server)) == "E102: sold out (HTTP 200)")
    }

    @Test func aBusyAnswerIsRetriedAsA503() async throws {
        let server = MockServer()
        server.stub(.get, "/api/orders/7", .json(raw: #"{"divisionCode":"E503"}"#), .json(raw: #"{"divisionCode":"0000","data":{"id":7,"total":1}}"#))
        #expect(await placeOrder(shop(server)) == "order 7")
        #expect(server.requests.count == 2)
    }

    @Test func endpointsNameTheirOwnEnvelope() async throws {
        let server = MockServer()
        server.stub(.get, "/api/orders/7/receipt", .json(raw: #"{"pdf":true}"#))
        server.stub(.get, "/api/v0/orders", .json(raw: #"{"code":3}"#, statusCode: 500))
        let provider = shop(server)
        _ = try await provider.request(StoreAPI.receipt(id: 7), as: [String: Bool].self)
        await #expect(throws: ShopError(code: "3", message: nil, status: 500)) { try await provider.request(StoreAPI.legacyOrders, as: [StoreOrder].self) }
    }

    @Test func aPhotoUploadDecodesItsAnswer() async throws {
        let server = MockServer()
        server.stub(.post, "/api/photos", .json(raw: #"{"divisionCode":"0000","data":{"id":5}}"#))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID().uuidString).jpg")
        try Data(repeating: 1, count: 1_024).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try await uploadPhoto(shop(server), at: file) == StorePhoto(id: 5))
    }
}
