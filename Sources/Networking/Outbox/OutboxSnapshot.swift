import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an ``Outbox`` keeps of an endpoint when it is enqueued: the request the provider would build (its
/// URL, method, the endpoint's headers and timeout; not the session's additional headers nor what the
/// interceptors add when it is sent, such as the token), and its body, still to be persisted.
struct OutboxSnapshot: Sendable {
    /// The body still to be written into the outbox's folder.
    enum PendingBody: Sendable {
        case none
        case inline(Data)
        case file(URL)
        case form(MultipartForm)
    }

    var record: OutboxRecord
    var body: PendingBody
    /// The body's size as far as it is known before it is written (a form's parts added up).
    var estimatedBodySize: Int64

    /// The snapshot of `endpoint` as `provider` builds it, or the ``OutboxError`` that refuses it.
    init(of endpoint: some Endpoint, provider: NetworkProvider, idempotencyKeyHeader: String) throws {
        let method = endpoint.method
        guard ![.get, .head, .options, .trace].contains(method) else { throw OutboxError.notAMutation(method) }
        let request: URLRequest
        let encoded: RequestBody.Encoded?
        do {
            (request, encoded) = try provider.snapshotRequestAndBody(for: endpoint)
        } catch {
            throw OutboxError.invalidMutation(Redactor().error(error))
        }
        guard let url = request.url else { throw OutboxError.invalidMutation("no URL") }
        if url.password != nil { throw OutboxError.containsSecret(name: "password") }   // user:password@ would reach the disk
        var headers = request.allHTTPHeaderFields ?? [:]
        let redactor = Redactor()
        for name in headers.keys where redactor.hidesHeader(name) && name.caseInsensitiveCompare(idempotencyKeyHeader) != .orderedSame {
            throw OutboxError.containsSecret(name: name)
        }
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] where redactor.hidesQueryItem(named: item.name) {
            throw OutboxError.containsSecret(name: item.name)
        }
        // The endpoint's own key (it sets the header) is kept; otherwise one is made now, once.
        let ownKey = headers.first { $0.key.caseInsensitiveCompare(idempotencyKeyHeader) == .orderedSame }
        if let ownKey { headers[ownKey.key] = nil }
        let key = ownKey.map(\.value).flatMap { $0.isEmpty ? nil : $0 } ?? UUID().uuidString.lowercased()
        switch encoded {
        case .inline(let data, _)?:
            (body, estimatedBodySize) = (.inline(data), Int64(data.count) * 4 / 3 + 4)   // base64 in the JSON payload
        case .file(let file, _)?:
            (body, estimatedBodySize) = (.file(file), RequestBody.sizeOfReadableRegularFile(file) ?? 0)
        case .spooled(let form)?:
            let sizes = form.parts.map { part -> Int64 in
                switch part.content {
                case .data(let data): return Int64(data.count) + 256
                case .file(let file): return (RequestBody.sizeOfReadableRegularFile(file) ?? 0) + 256
                }
            }
            (body, estimatedBodySize) = (.form(form), sizes.reduce(0, +))
        case nil:
            (body, estimatedBodySize) = (.none, 0)
        }
        let statuses = endpoint.acceptableStatusCodes
        record = OutboxRecord(
            id: UUID().uuidString.lowercased(), idempotencyKey: key, sequence: 0, group: nil, account: nil, method: method.rawValue,
            url: url.absoluteString, headers: headers, body: .none, timeout: endpoint.timeout, deadline: endpoint.deadline,
            maximumResponseSize: endpoint.maximumResponseSize, acceptableStatusCodes: statuses.sorted(),
            requiresAuthentication: endpoint.requiresAuthentication, enqueuedAt: Date(), state: .pending, failure: nil)
    }

    /// Writes the body (a file copied, a form spooled, both flushed) into `store`'s folder and encodes the
    /// record, not yet written: its exact size is known before anything that would be delivered is on disk.
    /// When anything fails, nothing of this mutation is left in the folder.
    func prepare(in store: OutboxStore) async throws -> PreparedMutation {
        var record = self.record
        let bodyName = record.id + ".body"
        let bodyPath = store.bodyPath(bodyName)
        var bodyLength: Int64 = 0
        switch body {
        case .none:
            break
        case .inline(let data):
            record.body = .inline(data)
        case .file(let source):
            bodyLength = try await BlockingFileWork.run { cancellation in
                try DurableFile.copy(from: source.path, to: bodyPath) { cancellation.isCancelled }
            }
            record.body = .file(name: bodyName, length: bodyLength)
            record.headers["Content-Length"] = String(bodyLength)
        case .form(let form):
            let temporary = DurableFile.temporaryPath(beside: bodyPath)
            let (contentType, length) = try await form.spool(to: URL(fileURLWithPath: temporary))
            try await BlockingFileWork.run { _ in
                try DurableFile.syncFile(temporary)
                try DurableFile.move(temporary, to: bodyPath)
            }
            bodyLength = length
            record.body = .file(name: bodyName, length: length)
            HeaderFields.set(contentType, for: "Content-Type", in: &record.headers)   // the boundary always wins
            HeaderFields.set(String(length), for: "Content-Length", in: &record.headers)
        }
        let copied = record.body.isFile ? bodyPath : nil
        do {
            return PreparedMutation(record: record, durable: try store.encode(record), bodyLength: bodyLength, bodyPath: copied)
        } catch {
            if let copied { PreparedMutation.removeBodyLeavingNoRecord(copied, in: store) }
            throw error
        }
    }
}

/// A mutation whose body is in the outbox's folder (flushed) and whose record is encoded but not yet
/// written: nothing names the body yet, so a crash now leaves no mutation (the folder's next opening removes
/// the body no record names).
struct PreparedMutation: Sendable {
    /// The record, its inline body included.
    let record: OutboxRecord
    /// The record as it is written.
    let durable: DurableRecord
    /// The length of its body file (0: none).
    let bodyLength: Int64
    /// The body file copied into the folder, if any.
    let bodyPath: String?
    /// The bytes record and body take on disk.
    var size: Int64 { Int64(DurableRecord.headerSize + durable.payload.count) + bodyLength }

    /// Writes the record (atomically, durably): from now on the mutation is in the folder.
    func write(in store: OutboxStore) throws(DurabilityError) {
        try store.records.write(durable, named: record.id)
    }

    /// Removes the body file, if any: the mutation is not kept.
    func removeBody(in store: OutboxStore) throws(DurabilityError) {
        if let bodyPath { try store.removeFile(bodyPath, false) }   // a copy that comes back names no record: removed at opening
    }

    /// Removes the body file after a failure that is the error reported: a body that stays names no record
    /// (nothing is delivered) and the folder's next opening removes it.
    static func removeBodyLeavingNoRecord(_ path: String, in store: OutboxStore) {
        do { try store.removeFile(path, false) } catch {}
    }
}

extension OutboxRecord.Body {
    /// Whether the body is a file in the folder.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }
}
