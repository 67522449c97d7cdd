import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension BackgroundTransferService {
    /// Starts sending `endpoint`'s body in the background, and returns its record once the record is on
    /// disk and the task resumed; the outcome comes through ``outcomes``.
    ///
    /// The system sends only from a file: a ``RequestBody/file(_:contentType:)`` body is sent from its
    /// file (keep it until the outcome), a ``RequestBody/multipart(_:)`` form is spooled to a file first,
    /// and any other body is written to one; the service removes the files it wrote. The token is
    /// attached now and cannot change later: see ``BackgroundTransferError/unauthorized(statusCode:credentialRefreshedSince:)``.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - tag: the app's own tag, kept in the record.
    ///   - account: the account the transfer must be sent for (when sending a failed transfer again):
    ///     when the signed-in account is another one, nothing is sent.
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` before ``start()`` or after ``stop()``,
    ///   what ``Endpoint/urlRequest(encoder:)`` throws, ``BackgroundTransferError/accountChanged``,
    ///   the authenticator's errors (``NetworkError/missingCredential``), or
    ///   ``NetworkError/fileWriteFailed(_:)`` when the body or the record cannot be written.
    @discardableResult
    public func upload(_ endpoint: some Endpoint, tag: String = "", account: String? = nil) async throws -> BackgroundTransferRecord {
        let id = UUID()
        var (request, body) = try endpoint.urlRequestAndBody(encoder: JSONEncoder())
        let bodyFile: URL
        var owned: URL?
        switch body {
        case .file(let file, _)?:
            bodyFile = file
        case .spooled(let form)?:
            let file = bodies.appendingPathComponent(id.uuidString + ".multipart")
            owned = file
            let (contentType, length) = try await form.spool(to: file)
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            request.setValue(String(length), forHTTPHeaderField: "Content-Length")
            bodyFile = file
        case .inline(let data, _)?:
            let file = try writeBody(data, id: id)
            owned = file
            request.httpBody = nil
            bodyFile = file
        case nil:
            let file = try writeBody(Data(), id: id)
            owned = file
            bodyFile = file
        }
        do {
            return try await enqueue(
                request, kind: .upload(fromFile: bodyFile), id: id, endpoint: endpoint, tag: tag, account: account, destination: nil,
                expectedValidator: nil, ownedBodyFile: owned)
        } catch {
            if let owned { try? FileManager.default.removeItem(at: owned) }   // ours, and not sent
            throw error
        }
    }

    /// Starts downloading `endpoint`'s body in the background to `destination`, and returns its record
    /// once the record is on disk and the task resumed; the outcome comes through ``outcomes``.
    ///
    /// The body lands at `destination` only whole and validated: an accepted status, no more than the
    /// endpoint's ``Endpoint/maximumResponseSize`` bytes, and the `ETag` `expectedValidator` names when
    /// it names one; it is flushed to disk and renamed into place (an atomic replace), so `destination`
    /// never holds a partial or unvalidated file.
    ///
    /// - Parameters:
    ///   - endpoint: the call; it sends no body.
    ///   - destination: a file URL in a folder that exists.
    ///   - tag: the app's own tag, kept in the record.
    ///   - expectedValidator: the `ETag` the body must carry (a file known by its version).
    ///   - account: the account the transfer must be sent for (see ``upload(_:tag:account:)``).
    /// - Throws: ``NetworkError/invalidRequest(field:reason:)`` for a body or a destination that is not a
    ///   file URL in an existing folder, and what ``upload(_:tag:account:)`` throws.
    @discardableResult
    public func download(
        _ endpoint: some Endpoint, to destination: URL, tag: String = "", expectedValidator: String? = nil, account: String? = nil
    ) async throws -> BackgroundTransferRecord {
        let (request, body) = try endpoint.urlRequestAndBody(encoder: JSONEncoder())
        guard body == nil else {
            throw NetworkError.invalidRequest(field: "body", reason: "a background download sends no body")
        }
        var isFolder: ObjCBool = false
        guard destination.isFileURL, FileManager.default.fileExists(atPath: destination.deletingLastPathComponent().path, isDirectory: &isFolder),
            isFolder.boolValue
        else {
            throw NetworkError.invalidRequest(field: "destination", reason: "is not a file URL in a folder that exists")
        }
        return try await enqueue(
            request, kind: .download, id: UUID(), endpoint: endpoint, tag: tag, account: account, destination: destination,
            expectedValidator: expectedValidator, ownedBodyFile: nil)
    }

    private func writeBody(_ data: Data, id: UUID) throws -> URL {
        let file = bodies.appendingPathComponent(id.uuidString + ".body")
        do {
            try data.write(to: file)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        return file
    }

    /// Authenticates `request`, records the transfer durably, then creates and resumes its task.
    private func enqueue(
        _ request: URLRequest, kind: BackgroundSessionTaskRequest.Kind, id: UUID, endpoint: some Endpoint, tag: String, account: String?,
        destination: URL?, expectedValidator: String?, ownedBodyFile: URL?
    ) async throws -> BackgroundTransferRecord {
        guard isRunning else {   // a download's file delivered before then would be lost
            throw NetworkError.invalidRequest(field: "background transfer service", reason: "is not started, or was stopped")
        }
        let (sent, signedIn, fingerprint) = try await authenticate(request, for: endpoint)
        guard isRunning else {   // stopped while the token was read: no task after stop()
            throw NetworkError.invalidRequest(field: "background transfer service", reason: "was stopped")
        }
        if let account, account != signedIn { throw BackgroundTransferError.accountChanged }
        let url = request.url ?? endpoint.baseURL   // urlRequestAndBody always sets one
        let record = BackgroundTransferRecord(
            id: id, kind: destination == nil ? .upload : .download, method: request.httpMethod ?? "GET", url: Self.redacted(url),
            destination: destination, expectedValidator: expectedValidator, maximumSize: endpoint.maximumResponseSize.map(Int64.init),
            acceptableStatusCodes: endpoint.acceptableStatusCodes, account: signedIn, tag: tag, createdAt: Date(), ownedBodyFile: ownedBodyFile,
            tokenFingerprint: fingerprint, expiredStatusCodes: authenticator?.expiredStatusCodes ?? [], homeDirectory: homeDirectory)
        try store.save(record, settlement: nil)   // durable before the task exists: a crash now leaves a record the next launch reports lost
        records[id] = record
        inlet.track(record.label, request: sent, authorizationHeader: fingerprint == nil ? nil : authenticator?.header.name)
        do {
            try session.startTask(BackgroundSessionTaskRequest(label: record.label, request: sent, kind: kind))
        } catch {
            records[id] = nil
            _ = inlet.untrack(record.label)
            try? store.remove(id)   // the task does not exist: its record would only be reported lost
            throw error
        }
        return record
    }

    /// `request` with the token, the account it was sent for, and the token's fingerprint (`nil` when
    /// no token was attached).
    private func authenticate(_ request: URLRequest, for endpoint: some Endpoint) async throws -> (URLRequest, String?, String?) {
        guard let authenticator else { return (request, nil, nil) }
        let context = RequestContext(endpoint: endpoint)
        guard authenticator.needsToken(request, context) else {
            return (request, try await authenticator.currentCredential()?.account, nil)
        }
        for _ in 0..<3 {
            let adapted = try await authenticator.adapt(request, for: context)
            guard let credential = try await authenticator.currentCredential() else { throw NetworkError.missingCredential }
            if adapted.value(forHTTPHeaderField: authenticator.header.name) == authenticator.header.prefix + credential.accessToken {
                return (adapted, credential.account, SHA256.hex(credential.accessToken))
            }
            // The credential changed between the two reads (a refresh, a sign-in): read both again.
        }
        throw NetworkError.missingCredential
    }

    /// `url` with the values of secret query items hidden, as a ``Redactor`` shows it.
    static func redacted(_ url: URL) -> URL {
        if let redacted = URL(string: Redactor().url(url)) { return redacted }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        components?.user = nil
        components?.password = nil
        return components?.url ?? URL(fileURLWithPath: "/")
    }
}
