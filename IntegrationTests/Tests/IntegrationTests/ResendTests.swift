import Foundation
import Networking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request sent on a reused connection that dies while or after its body goes out, before any answer:
/// libcurl (Linux) sends it again on a new connection, and FoundationNetworking asks the session's delegate for
/// the body again (Docs/Limits.md, "File bodies on Linux"). A file body over 8 MiB, streamed there, must arrive
/// whole: never empty, never without its beginning, framed as complete.
@Suite("Resending a streamed file body over TCP", .serialized)
struct ResendTests {
    struct Upload: Endpoint {
        let baseURL: URL
        let path: String
        let method: HTTPMethod
        let body: RequestBody
        var requiresAuthentication: Bool { false }
    }

    struct Size: Decodable, Equatable {
        let size: Int
    }

    /// `hostile_server.py`'s routes: the reused connection is closed once the body was read whole, or reset
    /// after its first MiB while the client still sends.
    static let routes = ["/dies-after-body", "/dies-mid-body"]

    /// Sends a GET that leaves a connection open, then PUTs a 24 MiB file on it, through `provider`.
    func upload(through provider: NetworkProvider, to base: URL, path: String) async throws -> Result<Size, any Error> {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("archive.zip")
        try writeFile(file, megabytes: 24)
        _ = try await provider.response(Upload(baseURL: base, path: path, method: .get, body: .none))
        let put = Upload(baseURL: base, path: path, method: .put, body: .file(file, contentType: "application/zip"))
        do {
            return .success(try await provider.request(put, as: Size.self))
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: routes)
    func theResendCarriesTheWholeFile(path: String) async throws {
        try await withHostileServer { base in
            let size = try await upload(through: NetworkProvider(), to: base, path: path).get()
            #expect(size == Size(size: 24 << 20))
        }
    }

    @Test(arguments: routes)
    func aRetryPolicyStillGetsTheWholeFileThere(path: String) async throws {
        try await withHostileServer { base in
            let size = try await upload(through: NetworkProvider(interceptor: RetryPolicy()), to: base, path: path).get()
            #expect(size == Size(size: 24 << 20))
        }
    }
}
