import Foundation
import Networking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request sent on a reused connection that dies after the body went out and before any answer: libcurl
/// (Linux) sends it again on a new connection, and FoundationNetworking cannot rewind a stream body for that
/// resend (Docs/Limits.md, "File bodies on Linux"). A file body over 8 MiB, streamed there, must never arrive
/// as an empty body framed as complete.
@Suite("Resending a streamed file body over TCP", .serialized)
struct ResendTests {
    struct Upload: Endpoint {
        let baseURL: URL
        let method: HTTPMethod
        let body: RequestBody
        var path: String { "/dies-after-body" }
        var requiresAuthentication: Bool { false }
    }

    struct Size: Decodable, Equatable {
        let size: Int
    }

    /// Sends a GET that leaves a connection open, then PUTs a 24 MiB file on it, through `provider`.
    func upload(through provider: NetworkProvider, to base: URL) async throws -> Result<Size, any Error> {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("archive.zip")
        try writeFile(file, megabytes: 24)
        _ = try await provider.response(Upload(baseURL: base, method: .get, body: .none))
        let put = Upload(baseURL: base, method: .put, body: .file(file, contentType: "application/zip"))
        do {
            return .success(try await provider.request(put, as: Size.self))
        } catch {
            return .failure(error)
        }
    }

    @Test func theAttemptFailsAsALostConnectionInsteadOfSendingAnEmptyBody() async throws {
        try await withHostileServer { base in
            let result = try await upload(through: NetworkProvider(), to: base)
            #if canImport(FoundationNetworking)
                guard case .failure(let error) = result else {
                    Issue.record("expected a lost connection, got \(result)")
                    return
                }
                #expect(error as? NetworkError == .transportFailed(URLError(.networkConnectionLost)), "\(error)")
            #else
                let size = try result.get()
                #expect(size == Size(size: 24 << 20))
            #endif
        }
    }

    @Test func aRetryPolicySendsItAgainWhole() async throws {
        try await withHostileServer { base in
            let provider = NetworkProvider(interceptor: RetryPolicy())
            let size = try await upload(through: provider, to: base).get()
            #expect(size == Size(size: 24 << 20))
        }
    }
}
