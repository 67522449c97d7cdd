import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a call's attempts send and receive their bodies. The default is a plain request: body in memory,
/// response gathered in memory.
struct TransferMode {
    /// A file the body is streamed from (a ``RequestBody/file(_:contentType:)`` body or a spooled form).
    var bodyFile: URL?
    /// The destination's folder, for a download (its partial file is ``resumption``'s, in that folder, so
    /// the final move is a rename).
    var downloadDirectory: URL?
    /// A download's partial file across attempts, and whether it resumes.
    var resumption: DownloadResumption?
    /// Whether an accepted body is handed out as it arrives.
    var streams = false
    /// Where progress goes.
    var progress: ProgressTracker?
    /// The statuses whose body goes to the download or the stream.
    var acceptable: Set<Int> = []
    /// The size limit, when not the endpoint's or the provider's.
    var sizeLimit: Int?
    /// The cache policy, when not the endpoint's or the provider's (a cached-then-fresh call's).
    var cachePolicy: CachePolicy?
    /// The request the endpoint built, when the caller built it already (a body-less call that may share: see ``CallGroups``).
    var prebuilt: URLRequest?
    /// The call's deadline, when not the endpoint's or the provider's from now (a call that may share: from its start).
    var deadline: Deadline?
    /// When the call began, when it began before its pipeline (it built its request first).
    var started: DispatchTime?
    /// The call's place in its group of identical calls, whose sends share their exchanges (see ``CallGroups``).
    var member: GroupMember?
}

/// What an attempt delivered besides its ``Response``.
enum DeliveredBody {
    /// A streamed body, flowing through this channel.
    case stream(BodyChannel)
    /// A downloaded body, in this temporary file.
    case file(URL)
}

extension NetworkProvider {
    /// Sends `endpoint` and returns its body as it arrives, once the response's status was accepted.
    ///
    /// Everything before the first byte goes through the pipeline as for ``response(_:interceptor:)``:
    /// the interceptors adapt it, a 401 is answered by a token refresh and a resend, a retrier may retry it,
    /// and the deadline covers it. An unacceptable status throws as usual (its body is read for the error
    /// mapper). Once the stream is returned nothing is retried: see ``ResponseStream``. The endpoint's
    /// ``Endpoint/maximumResponseSize`` (or the provider's) bounds how far the reader may fall behind, and
    /// the longest line or event; the stream itself may run as long as the server sends.
    ///
    /// ```swift
    /// let stream = try await provider.stream(ChatAPI.reply(to: question))
    /// for try await line in stream.lines { print(line) }
    /// ```
    public func stream(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)? = nil) async throws -> ResponseStream {
        var mode = TransferMode()
        mode.streams = true
        mode.acceptable = endpoint.acceptableStatusCodes
        let (response, delivered) = try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode)
        guard case .stream(let channel)? = delivered else {
            // An accepted answer that came whole instead of streaming: an empty reply, or a redirect the
            // provider did not follow (a modifier stopped it), whose body was gathered. It streams as it is.
            let channel = BodyChannel(limit: endpoint.maximumResponseSize ?? maximumResponseSize)
            if !response.data.isEmpty { _ = channel.send(response.data) }   // within the limit: it was gathered under it
            channel.finish(throwing: nil)
            return ResponseStream(response: response, channel: channel)
        }
        return ResponseStream(response: response, channel: channel)
    }

    /// Tells the monitors when the body of a streamed call ends (see
    /// ``EventMonitor/streamDidEnd(_:error:bytes:context:)``); called after its `requestDidFinish` was queued.
    static func reportStreamEnd(of delivered: DeliveredBody?, response: Response, to events: EventDispatcher, context: RequestContext) {
        guard case .stream(let channel)? = delivered else {
            // An accepted answer that came whole: its stream ends as it is handed out.
            let bytes = Int64(response.data.count)
            events.send { $0.streamDidEnd(response, error: nil, bytes: bytes, context: context) }
            return
        }
        channel.whenEnded { error, bytes in
            events.send { $0.streamDidEnd(response, error: error, bytes: bytes, context: context) }
        }
    }

    /// Downloads `endpoint`'s body into the file at `destination`, replacing any file there, and returns
    /// the response (its `data` is empty).
    ///
    /// The body is written to a temporary file beside `destination` and moved into place only when it
    /// arrived whole, so `destination` never holds a partial file; a failed or cancelled call removes the
    /// temporary file. The call's deadline covers the whole download (give a large download's endpoint a
    /// longer ``Endpoint/deadline``). The size limit is the endpoint's ``Endpoint/maximumResponseSize``
    /// if it names one, and none otherwise (the body goes to disk, not memory).
    ///
    /// A retried download resumes where the failed attempt stopped when it can: the retry asks only for
    /// the rest (`Range` with `If-Range`, when the body came with a strong validator) and appends it; the
    /// returned response is then the server's 206. Otherwise it starts again from the first byte. To
    /// keep the bytes of a call that fails or is cancelled, and continue in a later call, use
    /// ``download(_:to:resuming:interceptor:progress:)``.
    ///
    /// When the endpoint accepts `304 Not Modified` (a conditional request) and gets it, `destination` is
    /// left as it was: not replaced, not touched, still missing if it was; the returned response's
    /// `statusCode` is 304. Any other accepted answer whose body was not delivered to a file (on Linux, a
    /// 401 with `WWW-Authenticate: Basic` the endpoint accepts comes through an authentication challenge the
    /// provider cancels) likewise leaves `destination` as it was and returns that response.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes written and the total the server declared (unknown for a
    ///     compressed body, whose declared length is not the decoded one); see
    ///     ``TransferProgress/makeStream()``. Finished when the call ends.
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` before sending when `destination` is not a
    ///   file URL in a folder that exists and can be written; ``NetworkError/fileWriteFailed(_:)`` when the
    ///   file cannot be written or moved; otherwise what ``response(_:interceptor:)`` throws.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        interceptor: (any RequestInterceptor)? = nil,
        progress: ProgressReporter? = nil
    ) async throws -> Response {
        try await download(endpoint, to: destination, interceptor: interceptor, progress: progress, resuming: nil, keepsPartialFile: false)
    }

    /// Moves a download's accepted body into place at `destination`, flushed to disk first (`sync`, an
    /// `fsync` by default, so that a crash just after the rename cannot leave a destination whose bytes were
    /// never written), and returns `response`. A 304, and an accepted answer whose body was not delivered to
    /// a file (a Linux authentication challenge the endpoint accepts: the delegate cancelled it), leave
    /// `destination` as it was.
    static func place(
        _ delivered: DeliveredBody?, of response: Response, at destination: URL,
        sync: @escaping @Sendable (FileHandle) throws -> Void = { try $0.synchronize() }
    ) async throws -> Response {
        guard case .file(let file)? = delivered else { return response }
        guard response.statusCode != 304 else {
            try? FileManager.default.removeItem(at: file)   // a 304 has no body: our empty temporary file goes
            return response
        }
        do {
            try await BlockingFileWork.run { _ in   // an fsync may wait for the disk: not on the cooperative pool
                do {
                    let handle = try FileHandle(forWritingTo: file)
                    defer { try? handle.close() }   // nothing is written through this handle: closing it loses nothing
                    try sync(handle)
                } catch {
                    throw NetworkError.fileWriteFailed(error)
                }
            }
            if Task.isCancelled { throw NetworkError.cancelled }
            // rename(2) replaces the destination atomically (the file is in the same folder).
            guard rename(file.path, destination.path) == 0 else {
                throw NetworkError.fileWriteFailed(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
        } catch {
            try? FileManager.default.removeItem(at: file)   // our temporary file: removing it is all we can do
            throw error
        }
        return response
    }

    /// Sends `endpoint` (usually a ``RequestBody/file(_:contentType:)``, ``RequestBody/multipart(_:)`` or
    /// ``RequestBody/data(_:contentType:)`` body) and reports how much of the body was sent.
    ///
    /// Otherwise it is ``response(_:interceptor:)``: the same pipeline, limits and errors. A retried
    /// upload (say after a token refresh) sends the same bytes again, and its progress starts again from
    /// zero with the next ``TransferProgress/attempt``.
    ///
    /// - Parameters:
    ///   - endpoint: the call; its body is what is sent.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes sent and the body's size; see ``TransferProgress/makeStream()``.
    ///     Finished when the call ends.
    public func upload(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)? = nil,
        progress: ProgressReporter? = nil
    ) async throws -> Response {
        defer { progress?.finish() }
        var mode = TransferMode()
        mode.progress = progress.map(ProgressTracker.init)
        mode.acceptable = endpoint.acceptableStatusCodes
        return try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode).response
    }
}
