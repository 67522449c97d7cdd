import Foundation
import Networking
import NetworkingCombine
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fake that implements the transfers itself, as an app's test double does: it answers every call with
/// `statusCode` at once, reports no progress, and cannot finish the progress stream (only the library can).
private struct HandMadeTransfers: NetworkProviding {
    var statusCode = 201

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try JSONDecoder().decode(type, from: try await response(endpoint, interceptor: interceptor).data)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        let url = endpoint.baseURL.appendingPathComponent(endpoint.path)
        guard let http = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: [:]) else {
            throw URLError(.badServerResponse)
        }
        return Response(data: Data(), httpResponse: http, request: URLRequest(url: url))
    }

    func upload(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, progress: ProgressReporter?) async throws -> Response {
        try await response(endpoint, interceptor: interceptor)
    }

    func download(
        _ endpoint: some Endpoint, to destination: URL, interceptor: (any RequestInterceptor)?, progress: ProgressReporter?
    ) async throws -> Response {
        try Data("report".utf8).write(to: destination)
        return try await response(endpoint, interceptor: interceptor)
    }
}

/// The transfer publishers over a `NetworkProviding` of the app's own: they end when its call returns.
@Suite("Combine: transfer publishers over a fake", SuiteTimeLimit.oneMinute)
struct FakeTransferPublisherTests {
    @Test func anUploadPublisherOverAFakeThatImplementsUploadEmitsTheResponseAndFinishes() async throws {
        // GIVEN a fake whose upload returns without finishing the progress stream it was given
        let probe = Probe<TransferEvent<Response>>()
        // WHEN a subscriber subscribes to an upload through it
        let body = RequestBody.data(Data("clip".utf8), contentType: "application/octet-stream")
        HandMadeTransfers().uploadPublisher(API(path: "/clips/1", method: .put, body: body)).subscribe(probe)
        // THEN it gets the response and the end (it used to wait for the progress stream forever)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.map(\.response?.statusCode) == [201])
    }

    @Test func aDownloadPublisherOverAFakeThatImplementsDownloadEmitsTheResponseAndFinishes() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("report")
        let probe = Probe<TransferEvent<Response>>(initialDemand: .max(1))
        HandMadeTransfers(statusCode: 200).downloadPublisher(API(path: "/files/report"), to: destination).subscribe(probe)
        // THEN one demand gets the response (no progress value is invented), then the end
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values.map(\.response?.statusCode) == [200])
        #expect(try Data(contentsOf: destination) == Data("report".utf8))
    }
}
