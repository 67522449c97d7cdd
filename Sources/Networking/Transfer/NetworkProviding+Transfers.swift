import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The default implementations of the transfer requirements, for a ``NetworkProviding`` that implements only
// `request` and `response` (a fake in a test): each is built on `response(_:interceptor:)`, so the fake
// answers a transfer with the response it would give the same endpoint, held whole in memory. ``NetworkProvider``
// implements every requirement itself and never comes here; a type that wraps a real provider must forward
// the transfer requirements too, or its transfers lose streaming, resuming and progress (see NetworkProviding).

extension NetworkProviding {
    /// The default implementation of the requirement: ``response(_:interceptor:)``, whose endpoint carries
    /// the body to upload (a fake reads it from ``Endpoint/body``), with `progress` finished when the call
    /// ends. No progress value is reported: nothing was sent through a session.
    ///
    /// A fake that checks uploads needs nothing more than its `response`:
    ///
    /// ```swift
    /// let response = try await fake.upload(AvatarAPI.put(file), interceptor: nil, progress: nil)
    /// // the fake's response(_:interceptor:) saw AvatarAPI.put(file), whose body is .file(file, …)
    /// ```
    public func upload(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response {
        defer { progress?.finish() }
        return try await response(endpoint, interceptor: interceptor)
    }

    /// The default implementation of the requirement: writes the `data` of ``response(_:interceptor:)`` to
    /// `destination` atomically (a temporary file moved into place, so `destination` never holds a partial
    /// file) and returns that response with an empty `data`, as ``NetworkProvider`` does.
    ///
    /// As with ``NetworkProvider/download(_:to:interceptor:progress:)``: `destination` is checked before
    /// `response` is asked, a `304 Not Modified` leaves `destination` as it was, and `progress` receives
    /// one value (every byte written, of that total) before it is finished.
    ///
    /// ```swift
    /// let fake = FakeNetwork(body: Data("report".utf8))      // implements request and response only
    /// _ = try await fake.download(ReportAPI.latest, to: destination, interceptor: nil, progress: nil)
    /// // destination now holds "report"
    /// ```
    ///
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` when `destination` is not a file URL in a
    ///   folder that exists and can be written; ``NetworkError/fileWriteFailed(_:)`` when the file cannot be
    ///   written; ``NetworkError/cancelled`` when the task was cancelled before the file was in place;
    ///   otherwise what ``response(_:interceptor:)`` throws.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response {
        defer { progress?.finish() }
        try DefaultTransfers.checkDestination(destination)
        let response = try await response(endpoint, interceptor: interceptor)
        return try await DefaultTransfers.place(response, at: destination, progress: progress)
    }

    /// The default implementation of the requirement: `resumable` is not used (its partial file is left to
    /// its owner), and the body is downloaded whole as the default of
    /// ``download(_:to:interceptor:progress:)`` does. It never throws ``DownloadInterrupted``: the body of
    /// ``response(_:interceptor:)`` arrives whole or not at all, so there is nothing to keep.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        resuming resumable: ResumableDownload?,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response {
        try await download(endpoint, to: destination, interceptor: interceptor, progress: progress)
    }

    /// The default implementation of the requirement: asks ``response(_:interceptor:)`` for a `GET` of
    /// ``ResumableDownload/url`` (with the value's deadline and size limit, no `Range`: the whole body) and
    /// writes it to `destination` as the default of ``download(_:to:interceptor:progress:)`` does.
    ///
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` when the value's URL is not http or https;
    ///   otherwise what ``download(_:to:interceptor:progress:)`` throws.
    public func download(
        resuming resumable: ResumableDownload,
        to destination: URL,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response {
        guard let scheme = resumable.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            progress?.finish()
            throw NetworkError.invalidRequest(field: "resumable download's URL", reason: "is not http or https")
        }
        return try await download(ResumedDownload(resumable: resumable), to: destination, interceptor: interceptor, progress: progress)
    }

    /// The default implementation of the requirement: a ``ResponseStream`` of the `data` of
    /// ``response(_:interceptor:)``, in one chunk (none when it is empty), already ended, so a reader gets
    /// the whole body at once and then the end. Its ``ResponseStream/response`` is that response with an
    /// empty `data`, as ``NetworkProvider`` hands it out.
    ///
    /// Its ``ResponseStream/lines`` and ``ResponseStream/events`` split that body as they split a streamed
    /// one; no line is too long for the stream, since the whole body is already in memory.
    ///
    /// ```swift
    /// let fake = FakeNetwork(body: Data("data: hi\n\n".utf8))   // implements request and response only
    /// for try await event in try await fake.stream(ChatAPI.reply, interceptor: nil).events {
    ///     print(event.data)                                    // "hi"
    /// }
    /// ```
    public func stream(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?
    ) async throws -> ResponseStream {
        let response = try await response(endpoint, interceptor: interceptor)
        // The body is all here: the limit only has to hold it (a smaller one would end the stream at once).
        let limit = max(endpoint.maximumResponseSize ?? NetworkProvider.defaultMaximumResponseSize, response.data.count)
        let channel = BodyChannel(limit: limit)
        if !response.data.isEmpty { _ = channel.send(response.data) }   // within the limit, so it is always taken
        channel.finish(throwing: nil)
        return ResponseStream(response: DefaultTransfers.withoutBody(response), channel: channel)
    }

    /// Uploads `endpoint`'s body with the provider's interceptor only; see
    /// ``upload(_:interceptor:progress:)``.
    ///
    /// ```swift
    /// let (progress, reporter) = TransferProgress.makeStream()
    /// let response = try await network.upload(ClipAPI.put(file), progress: reporter)
    /// ```
    public func upload(_ endpoint: some Endpoint, progress: ProgressReporter? = nil) async throws -> Response {
        try await upload(endpoint, interceptor: nil, progress: progress)
    }

    /// Uploads `endpoint`'s body with `interceptor` run for this call only, reporting no progress; see
    /// ``upload(_:interceptor:progress:)``.
    public func upload(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await upload(endpoint, interceptor: interceptor, progress: nil)
    }

    /// Downloads `endpoint`'s body into `destination` with the provider's interceptor only; see
    /// ``download(_:to:interceptor:progress:)``.
    ///
    /// ```swift
    /// _ = try await network.download(ReportAPI.latest, to: documents.appendingPathComponent("report.pdf"))
    /// ```
    public func download(_ endpoint: some Endpoint, to destination: URL, progress: ProgressReporter? = nil) async throws -> Response {
        try await download(endpoint, to: destination, interceptor: nil, progress: progress)
    }

    /// Downloads `endpoint`'s body into `destination` with `interceptor` run for this call only, reporting
    /// no progress; see ``download(_:to:interceptor:progress:)``.
    public func download(_ endpoint: some Endpoint, to destination: URL, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await download(endpoint, to: destination, interceptor: interceptor, progress: nil)
    }

    /// Downloads `endpoint`'s body into `destination`, continuing `resumable`, with the provider's
    /// interceptor only; see ``download(_:to:resuming:interceptor:progress:)``.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        resuming resumable: ResumableDownload?,
        progress: ProgressReporter? = nil
    ) async throws -> Response {
        try await download(endpoint, to: destination, resuming: resumable, interceptor: nil, progress: progress)
    }

    /// Downloads `endpoint`'s body into `destination`, continuing `resumable`, with `interceptor` run for
    /// this call only, reporting no progress; see ``download(_:to:resuming:interceptor:progress:)``.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        resuming resumable: ResumableDownload?,
        interceptor: (any RequestInterceptor)?
    ) async throws -> Response {
        try await download(endpoint, to: destination, resuming: resumable, interceptor: interceptor, progress: nil)
    }

    /// Continues an interrupted download into `destination` with the provider's interceptor only; see
    /// ``download(resuming:to:interceptor:progress:)``.
    public func download(resuming resumable: ResumableDownload, to destination: URL, progress: ProgressReporter? = nil) async throws -> Response {
        try await download(resuming: resumable, to: destination, interceptor: nil, progress: progress)
    }

    /// Continues an interrupted download into `destination` with `interceptor` run for this call only,
    /// reporting no progress; see ``download(resuming:to:interceptor:progress:)``.
    public func download(
        resuming resumable: ResumableDownload,
        to destination: URL,
        interceptor: (any RequestInterceptor)?
    ) async throws -> Response {
        try await download(resuming: resumable, to: destination, interceptor: interceptor, progress: nil)
    }

    /// Streams `endpoint`'s body with the provider's interceptor only; see ``stream(_:interceptor:)``.
    ///
    /// ```swift
    /// for try await line in try await network.stream(ChatAPI.reply(to: question)).lines { print(line) }
    /// ```
    public func stream(_ endpoint: some Endpoint) async throws -> ResponseStream {
        try await stream(endpoint, interceptor: nil)
    }
}

/// What the default transfer implementations of ``NetworkProviding`` share (the destination check with
/// ``NetworkProvider``'s own downloads).
enum DefaultTransfers {
    /// Throws what ``NetworkProvider``'s downloads throw before sending when `destination` is not a file
    /// URL in a folder that exists and can be written.
    static func checkDestination(_ destination: URL) throws {
        guard destination.isFileURL else {
            throw NetworkError.invalidRequest(field: "download destination", reason: "is not a file URL")
        }
        var isFolder: ObjCBool = false
        let folder = destination.deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue,
            FileManager.default.isWritableFile(atPath: folder.path)
        else {
            throw NetworkError.invalidRequest(field: "download destination", reason: "is in a folder that does not exist or cannot be written")
        }
    }

    /// Writes `response`'s body to `destination` atomically, off the cooperative pool, reports it to
    /// `progress`, and returns `response` without its body. A 304 leaves `destination` as it was.
    static func place(_ response: Response, at destination: URL, progress: ProgressReporter?) async throws -> Response {
        guard response.statusCode != 304 else { return withoutBody(response) }
        if Task.isCancelled { throw NetworkError.cancelled }
        let data = response.data
        try await BlockingFileWork.run { _ in   // a large body's write may wait for the disk
            do {
                try data.write(to: destination, options: .atomic)
            } catch {
                throw NetworkError.fileWriteFailed(error)
            }
        }
        progress?.report(TransferProgress(completedBytes: Int64(data.count), totalBytes: Int64(data.count)))
        return withoutBody(response)
    }

    /// `response` with an empty `data`, its report kept: what a download or a stream hands out.
    static func withoutBody(_ response: Response) -> Response {
        Response(data: Data(), httpResponse: response.httpResponse, request: response.request, report: response.storedReport)
    }
}
