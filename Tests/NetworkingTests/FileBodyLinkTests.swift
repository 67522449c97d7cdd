import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// File bodies and form file parts reached through a symbolic link (an app's cache, a shared container).
@Suite("File bodies through symbolic links")
struct FileBodyLinkTests {
    /// A scratch folder with `target.bin` (the bytes), a link to it, a relative link to that link, a
    /// link to the folder itself, and a dangling link; removed by `remove()`.
    struct Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("networking-links-\(UUID().uuidString)")
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var target: URL { url.appendingPathComponent("target.bin") }
        var link: URL { url.appendingPathComponent("link.bin") }
        var relativeLinkToLink: URL { url.appendingPathComponent("link-to-link.bin") }
        var linkToFolder: URL { url.appendingPathComponent("folder-link") }
        var dangling: URL { url.appendingPathComponent("dangling.bin") }

        init() throws {
            let files = FileManager.default
            try files.createDirectory(at: url, withIntermediateDirectories: true)
            try bytes.write(to: target)
            try files.createSymbolicLink(at: link, withDestinationURL: target)
            try files.createSymbolicLink(atPath: relativeLinkToLink.path, withDestinationPath: "link.bin")
            try files.createSymbolicLink(at: linkToFolder, withDestinationURL: url)
            try files.createSymbolicLink(at: dangling, withDestinationURL: url.appendingPathComponent("gone.bin"))
        }

        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    @Test func aFileBodyThatIsALinkToARegularFileSendsTheTargetsBytes() async throws {
        // GIVEN a symbolic link to a readable file, and a relative link to that link
        let folder = try Folder()
        defer { folder.remove() }
        let server = MockServer()
        server.stub(.put, "/v1/blob", .status(204))
        let provider = server.makeProvider()
        for link in [folder.link, folder.relativeLinkToLink] {
            // WHEN the link is sent as a file body
            let response = try await provider.response(
                TestEndpoint(path: "/blob", method: .put, body: .file(link, contentType: "application/octet-stream")))
            // THEN the server receives the target's bytes, with their length
            #expect(response.statusCode == 204)
            let request = try #require(server.requests.last)
            #expect(request.body == folder.bytes)
            #expect(request.header("Content-Length") == "100000")
        }
        #expect(server.requests.count == 2)
    }

    @Test func aFormFilePartThatIsALinkToARegularFileSendsTheTargetsBytes() async throws {
        // GIVEN a form whose file part is a symbolic link to a readable file
        let folder = try Folder()
        defer { folder.remove() }
        let server = MockServer()
        server.stub(.post, "/v1/uploads", .status(201))
        // WHEN it is sent
        let response = try await server.makeProvider().response(
            TestEndpoint(path: "/uploads", method: .post, body: .multipart(MultipartForm([.file("upload", at: folder.link)]))))
        // THEN the part holds the target's bytes, under the link's file name
        #expect(response.statusCode == 201)
        let parts = try #require(server.requests.first).multipartParts()
        #expect(parts.map(\.name) == ["upload"])
        #expect(parts.first?.filename == "link.bin")
        #expect(parts.first?.data == folder.bytes)
    }

    @Test func aLinkToAFolderOrToNothingIsStillRefusedBeforeSending() async throws {
        // GIVEN links that do not end at a readable regular file
        let folder = try Folder()
        defer { folder.remove() }
        let server = MockServer()
        server.stub(.put, "/v1/blob", .status(204))
        server.stub(.post, "/v1/uploads", .status(201))
        let provider = server.makeProvider()
        for link in [folder.linkToFolder, folder.dangling] {
            // WHEN each is sent as a file body and as a form's file part
            // THEN each is refused as an invalid request, and nothing is sent
            await #expect {
                try await provider.response(TestEndpoint(path: "/blob", method: .put, body: .file(link, contentType: "application/octet-stream")))
            } throws: { error in
                guard case NetworkError.invalidRequest(field: "body file", _) = error else { return false }
                return true
            }
            await #expect {
                try await provider.response(TestEndpoint(path: "/uploads", method: .post, body: .multipart(MultipartForm([.file("upload", at: link)]))))
            } throws: { error in
                guard case NetworkError.invalidRequest(field: "multipart part 1's file", _) = error else { return false }
                return true
            }
        }
        #expect(server.requests.isEmpty)
    }
}
