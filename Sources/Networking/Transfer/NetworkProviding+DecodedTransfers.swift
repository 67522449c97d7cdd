import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Uploads whose answer the repository needs as a value: decoded as `request(_:as:)` decodes, with the
// endpoint's decoder and envelope.

extension NetworkProviding {
    /// The default implementation of the requirement: ``request(_:as:interceptor:)``, whose endpoint carries
    /// the body to upload (a fake reads it from ``Endpoint/body``), with `progress` finished when the call
    /// ends. No progress value is reported: nothing was sent through a session.
    public func upload<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> T {
        defer { progress?.finish() }
        return try await request(endpoint, as: type, interceptor: interceptor)
    }

    /// Uploads `endpoint`'s body with the provider's interceptor only and decodes the answer as `type`; see
    /// ``upload(_:as:interceptor:progress:)``. A form is an endpoint whose body is a ``MultipartForm``.
    ///
    /// ```swift
    /// let (progress, reporter) = TransferProgress.makeStream()
    /// let photo = try await network.upload(PhotoAPI.post(form), as: Photo.self, progress: reporter)
    /// ```
    public func upload<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, progress: ProgressReporter? = nil) async throws -> T {
        try await upload(endpoint, as: type, interceptor: nil, progress: progress)
    }

    /// Uploads `endpoint`'s body with `interceptor` run for this call only, reporting no progress, and decodes
    /// the answer as `type`; see ``upload(_:as:interceptor:progress:)``.
    public func upload<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try await upload(endpoint, as: type, interceptor: interceptor, progress: nil)
    }
}

extension NetworkProvider {
    /// Uploads `endpoint`'s body as ``upload(_:interceptor:progress:)`` does (a file or a spooled form streamed
    /// from disk, progress as bytes are sent, replayed on a retry) and decodes the answer as `type` with the
    /// endpoint's decoder, else the provider's, from inside the envelope when there is one (see ``EnvelopeFormat``).
    ///
    /// ```swift
    /// let photo = try await provider.upload(PhotoAPI.post(MultipartForm([.file("photo", at: url)])), as: Photo.self)
    /// ```
    public func upload<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)? = nil,
        progress: ProgressReporter? = nil
    ) async throws -> T {
        try decodePayload(try await upload(endpoint, interceptor: interceptor, progress: progress), as: type, for: endpoint)
    }
}
