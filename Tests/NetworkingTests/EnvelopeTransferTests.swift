import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads whose answer decodes into a value, with the endpoint's decoder and the envelope.
@Suite("Decoded uploads", SuiteTimeLimit.oneMinute)
struct EnvelopeTransferTests {
    struct Photo: Codable, Equatable {
        let id: Int
        let uploadedAt: Date
    }

    struct PostPhoto: Endpoint {
        let form: MultipartForm
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/photos" }
        var method: HTTPMethod { .post }
        var body: RequestBody { .multipart(form) }
        var decoder: JSONDecoder? { Self.iso8601 }

        private static let iso8601: JSONDecoder = {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }()
    }

    @Test func aMultipartUploadDecodesItsEnvelopedAnswerWithTheEndpointsDecoder() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/photos", .json(raw: #"{"divisionCode":"0000","data":{"id":3,"uploadedAt":"2026-01-02T03:04:05Z"}}"#))
        let (updates, reporter) = TransferProgress.makeStream()
        let form = MultipartForm([.text("title", "Beach"), .data("photo", Data(repeating: 7, count: 4_096), filename: "beach.jpg")])
        let photo = try await envelopedProvider(server).upload(PostPhoto(form: form), as: Photo.self, progress: reporter)
        #expect(photo == Photo(id: 3, uploadedAt: Date(timeIntervalSince1970: 1_767_323_045)))
        var last: TransferProgress?
        for await update in updates { last = update }   // finished when the call ended
        #expect(last?.completedBytes ?? 0 > 4_096)
        #expect(server.requests.first?.body.count ?? 0 > 4_096)
    }

    @Test func anUploadWhoseEnvelopeFailsThrowsTheAppsError() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/photos", .json(raw: #"{"divisionCode":"E413","resultMsg":"too large"}"#))
        await #expect(throws: AppAPIError(code: "E413", message: "too large", statusCode: 200)) {
            try await envelopedProvider(server).upload(PostPhoto(form: MultipartForm([.text("a", "b")])), as: Photo.self)
        }
    }

    @Test func aFakesDecodedUploadIsItsRequest() async throws {
        // A fake that implements request and response only serves decoded uploads through request(_:as:).
        let fake = CannedNetwork(json: #"{"id":3,"uploadedAt":"2026-01-02T03:04:05Z"}"#)
        let photo = try await fake.upload(PostPhoto(form: MultipartForm([.text("a", "b")])), as: Photo.self)
        #expect(photo.id == 3)
    }
}

/// A fake of the kind a repository's tests write: a canned JSON body, decoded with the endpoint's decoder.
struct CannedNetwork: NetworkProviding {
    let json: String

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try (endpoint.decoder ?? JSONDecoder()).decode(T.self, from: Data(json.utf8))
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        throw NetworkError.notCached
    }
}
