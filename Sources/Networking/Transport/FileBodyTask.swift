import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a body read from a file is handed to `URLSession`.
///
/// On Apple platforms an upload task reads the file and declares its length. On Linux an upload task from
/// a file can end the process: FoundationNetworking reads the file ahead with `DispatchIO` and resumes
/// libcurl behind a `try!` when a read completes, which traps once the transfer has ended in between (a
/// cancel, a deadline, a server that answers before the body is sent; see Docs/Limits.md). So on Linux the
/// body never goes that way: it is given to a data task, read as libcurl asks for it, never paused.
enum FileBodyTask {
    /// The largest file sent from memory on Linux, with its `Content-Length` as on Apple platforms: 8 MiB.
    static let inlineLimit: Int64 = 8 << 20

    /// `request` with the body of `file` in it, for a data task on Linux: at most `inlineLimit` bytes
    /// are read into `httpBody`, with the `Content-Length` of what was read. A larger file is streamed
    /// (a ``FileBodyStream``), which FoundationNetworking sends with the chunked coding: then the request
    /// has no `Content-Length` (RFC 9112 §6.2: never beside `Transfer-Encoding`).
    ///
    /// Throws ``NetworkError/invalidRequest(field:reason:)`` when the file is gone or unreadable.
    static func request(_ request: URLRequest, sendingFrom file: URL, inlineLimit: Int64 = inlineLimit) throws -> URLRequest {
        let size = try RequestBody.size(ofBodyFile: file)
        var sent = request
        if size <= inlineLimit {
            let body: Data
            do {
                body = try Data(contentsOf: file)
            } catch {
                throw RequestBody.unreadableBodyFile
            }
            sent.httpBody = body
            sent.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
        } else {
            sent.httpBodyStream = FileBodyStream(path: file.path)   // opened (and checked again) when sent
            sent.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return sent
    }

    /// The task that sends `request` with its body read from `file`, in `session`. On Linux the file is read
    /// (or opened) on the blocking queue, not on a thread of Swift's cooperative pool.
    static func task(for request: URLRequest, sendingFrom file: URL, in session: URLSession) async throws -> URLSessionTask {
        #if canImport(FoundationNetworking)
            let prepared = try await BlockingFileWork.run { _ in try Self.request(request, sendingFrom: file) }
            return session.dataTask(with: prepared)
        #else
            return session.uploadTask(with: request, fromFile: file)
        #endif
    }
}
