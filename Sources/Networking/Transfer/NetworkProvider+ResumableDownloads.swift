import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Downloads `endpoint`'s body into the file at `destination` as
    /// ``download(_:to:interceptor:progress:)`` does, continuing `resumable` when it is given, and keeps
    /// what arrived when the call fails or is cancelled: it then throws ``DownloadInterrupted``, whose
    /// ``DownloadInterrupted/resumable`` continues the download in a later call, after a relaunch too.
    ///
    /// ```swift
    /// do {
    ///     _ = try await provider.download(MapPack(), to: destination, resuming: saved, progress: reporter)
    ///     saved = nil                                   // the file is at `destination`, whole
    /// } catch let interrupted as DownloadInterrupted {
    ///     saved = interrupted.resumable                 // Codable: store it, and pass it back later
    /// }
    /// ```
    ///
    /// With `resumable`, the first attempt asks only for the rest of the body (`Range: bytes=N-` and
    /// `If-Range` with the validator the body was served with) and appends it to the partial file. A
    /// server that sends the whole body instead (it ignores ranges, or the file changed) starts the file
    /// again from the first byte, and so does one that refuses the range (416) or sends another part.
    /// A 206 is appended only when it carries the validator the kept bytes came with (RFC 9110 §13.1.5):
    /// one of another version, or without a validator, starts the file again too. A 206 that stops short
    /// of the known end (RFC 9110 §14.4) is kept, and the next attempt asks for the rest; the call never
    /// succeeds with a file shorter than the length the server declared.
    ///
    /// A `resumable` of another URL (the endpoint's URL must be the value's exactly, secret query values
    /// included: a presigned URL signed afresh is another URL), whose partial file is gone, or that
    /// another call is continuing is not used: the download starts from the first byte. The partial file
    /// of a value that cannot be continued is removed (one that another call is continuing is left to it).
    ///
    /// Only a `GET` whose body came with a strong validator and no content encoding can be resumed; any
    /// other failure throws the error itself and removes the partial file, as
    /// ``download(_:to:interceptor:progress:)`` does. The partial file lies beside `destination` and is
    /// moved into place when the download completes.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - resumable: what an earlier call of this endpoint kept, or `nil` to start from the first byte.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes in the file (a resumed download starts at those it kept) and the
    ///     whole length; see ``TransferProgress/makeStream()``. Finished when the call ends.
    /// - Throws: ``DownloadInterrupted`` when the call failed or was cancelled with part of the body kept;
    ///   otherwise what ``download(_:to:interceptor:progress:)`` throws.
    public func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        resuming resumable: ResumableDownload?,
        interceptor: (any RequestInterceptor)? = nil,
        progress: ProgressReporter? = nil
    ) async throws -> Response {
        try await download(endpoint, to: destination, interceptor: interceptor, progress: progress, resuming: resumable, keepsPartialFile: true)
    }

    /// Continues an interrupted download into the file at `destination`: a `GET` of
    /// ``ResumableDownload/url`` that asks only for the rest of the body, with the endpoint's deadline and
    /// size limit the value kept. Otherwise it is ``download(_:to:resuming:interceptor:progress:)``.
    ///
    /// The request is adapted by the provider's interceptors and `interceptor` (an ``AuthInterceptor``
    /// attaches the token), but the endpoint's own headers are not kept in the value: when the download
    /// needs them, pass the endpoint to ``download(_:to:resuming:interceptor:progress:)`` instead.
    ///
    /// ```swift
    /// let saved = try JSONDecoder().decode(ResumableDownload.self, from: stored)
    /// _ = try await provider.download(resuming: saved, to: destination)
    /// ```
    ///
    /// - Parameters:
    ///   - resumable: what the interrupted call kept (``DownloadInterrupted/resumable``).
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes in the file, from those kept, and the whole length.
    /// A value decoded from its encoded form whose URL had secret query values (a presigned URL's
    /// signature, a token) lost them when it was encoded (see ``ResumableDownload/url``): it cannot be sent
    /// as it is, and this call throws before sending. Pass the same endpoint to
    /// ``download(_:to:resuming:interceptor:progress:)`` instead (signed afresh, it is another URL: the
    /// download starts from the first byte).
    ///
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` when the value's URL is not http or https,
    ///   or lost its secret values when it was encoded;
    ///   otherwise what ``download(_:to:resuming:interceptor:progress:)`` throws.
    public func download(
        resuming resumable: ResumableDownload,
        to destination: URL,
        interceptor: (any RequestInterceptor)? = nil,
        progress: ProgressReporter? = nil
    ) async throws -> Response {
        guard let scheme = resumable.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            progress?.finish()
            throw NetworkError.invalidRequest(field: "resumable download's URL", reason: "is not http or https")
        }
        guard !resumable.urlWithoutSecrets else {
            progress?.finish()   // its signature or token was not stored: the endpoint must be given again
            throw NetworkError.invalidRequest(
                field: "resumable download's URL", reason: "was stored without its secret query values: pass the endpoint to download(_:to:resuming:)")
        }
        return try await download(
            ResumedDownload(resumable: resumable), to: destination, interceptor: interceptor, progress: progress, resuming: resumable,
            keepsPartialFile: true)
    }

    /// Every download: into `destination` through a partial file beside it, continuing `value` when it
    /// can; when the call fails with bytes kept, `keepsPartialFile` says whether they are handed out in a
    /// ``DownloadInterrupted`` or removed.
    func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?,
        resuming value: ResumableDownload?,
        keepsPartialFile: Bool
    ) async throws -> Response {
        defer { progress?.finish() }
        try DefaultTransfers.checkDestination(destination)
        let folder = destination.deletingLastPathComponent()
        let resumption = await DownloadResumption.make(for: endpoint, in: folder, resuming: value)
        defer { resumption.release() }
        await StaleTemporaryFiles.sweepDownloads(in: folder)   // a crashed process's leftovers, once per folder
        var mode = TransferMode()
        mode.downloadDirectory = folder
        mode.resumption = resumption
        mode.progress = progress.map(ProgressTracker.init)
        mode.acceptable = endpoint.acceptableStatusCodes
        mode.sizeLimit = endpoint.maximumResponseSize ?? .max
        let (response, delivered): (Response, DeliveredBody?)
        do {
            (response, delivered) = try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode)
        } catch {
            if keepsPartialFile, let resumable = resumption.resumable() {
                throw DownloadInterrupted(resumable: resumable, underlying: error)
            }
            await resumption.removeFile()   // nothing to resume from: no partial file is left behind
            throw error
        }
        guard case .file? = delivered else {
            await resumption.removeFile()   // an answer without a body (a 304): what an earlier attempt kept goes
            return try await Self.place(delivered, of: response, at: destination)
        }
        return try await Self.place(delivered, of: response, at: destination)
    }
}

/// The call that continues a ``ResumableDownload`` without its endpoint: a `GET` of its URL, with the
/// deadline and size limit the endpoint had.
struct ResumedDownload: Endpoint {
    let resumable: ResumableDownload
    var baseURL: URL { resumable.url }
    var deadline: TimeInterval? { resumable.deadline }
    var maximumResponseSize: Int? { resumable.maximumResponseSize }
}
