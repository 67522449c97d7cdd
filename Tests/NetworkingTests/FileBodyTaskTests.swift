import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a file body is handed to a data task on Linux (see `FileBodyTask` and Docs/Limits.md): never as an
/// upload task from the file, whose reads FoundationNetworking resumes behind a `try!`.
@Suite("File bodies on Linux: from memory or streamed")
struct FileBodyTaskTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-filebody-\(UUID().uuidString)")
    let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    func file() throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("body.bin")
        try bytes.write(to: url)
        return url
    }

    func request() -> URLRequest {
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/files")!)
        request.httpMethod = "PUT"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.setValue("999", forHTTPHeaderField: "Content-Length")   // stale: the file changed since the call was built
        return request
    }

    static func read(_ stream: InputStream, closing: Bool = true) -> Data {
        stream.open()
        defer { if closing { stream.close() } }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 { data.append(buffer, count: count) }
        return data
    }

    @Test func aFileUpToTheLimitIsSentFromMemoryWithTheLengthOfWhatWasRead() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try file()
        // WHEN a file of exactly the limit, and one well under the default, are prepared
        for limit in [Int64(bytes.count), FileBodyTask.inlineLimit] {
            let sent = try FileBodyTask.request(request(), sendingFrom: url, inlineLimit: limit)
            // THEN the bytes are the body, framed by their own length (RFC 9110 §8.6), other fields kept
            #expect(sent.httpBody == bytes)
            #expect(sent.httpBodyStream == nil)
            #expect(sent.value(forHTTPHeaderField: "Content-Length") == "100000")
            #expect(sent.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
            #expect(sent.httpMethod == "PUT")
        }
    }

    @Test func aLargerFileIsStreamedWithoutAContentLength() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try file()
        // WHEN the file is one byte over the limit
        let sent = try FileBodyTask.request(request(), sendingFrom: url, inlineLimit: Int64(bytes.count - 1))
        // THEN it is a stream of every byte, and no Content-Length goes beside the chunked coding (RFC 9112 §6.2)
        #expect(sent.httpBody == nil)
        #expect(sent.value(forHTTPHeaderField: "Content-Length") == nil)
        let stream = try #require(sent.httpBodyStream as? FileBodyStream)
        #expect(Self.read(stream) == bytes)
    }

    @Test func aStreamedFileIsReadOnceToItsEndAndARereadIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try file()
        let stream = FileBodyStream(path: url.path)
        #expect(stream.streamStatus == .notOpen)
        // WHEN it is read to its end, as libcurl reads a body
        #expect(Self.read(stream, closing: false) == bytes)
        #expect(stream.streamStatus == .atEnd)
        #expect(!stream.refusedToResend)
        // and read again, as libcurl does when it sends the request again on a new connection without a rewind
        #expect(stream.hasBytesAvailable)   // so that FoundationNetworking asks, instead of sending an empty body
        var buffer = [UInt8](repeating: 0, count: 16)
        // THEN that read fails: the attempt ends as a lost connection, not as an empty body framed as complete
        #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
        #expect(stream.refusedToResend)
        #expect(stream.streamStatus == .error)
        #expect((stream.streamError as? POSIXError)?.code == .ECONNRESET)
        stream.close()
    }

    @Test func aStreamOnAFileGoneSinceTheCallWasBuiltFailsItsFirstRead() throws {
        let stream = FileBodyStream(path: folder.appendingPathComponent("gone.bin").path)
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
        #expect(stream.streamStatus == .error)
        #expect((stream.streamError as? POSIXError)?.code == .ENOENT)
        #expect(!stream.refusedToResend)
    }

    @Test func aFileGoneBeforeTheSendFailsTheCallWithATypedError() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try file()
        try FileManager.default.removeItem(at: url)
        #expect(throws: NetworkError.invalidRequest(field: "body file", reason: "does not exist, is not a regular file or cannot be read")) {
            try FileBodyTask.request(request(), sendingFrom: url)
        }
        // and so does a folder where the file was
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        #expect(throws: NetworkError.self) { try FileBodyTask.request(request(), sendingFrom: url) }
    }
}
