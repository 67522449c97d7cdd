import Foundation

/// One mutation as the outbox keeps it on disk: the payload of its ``DurableRecord`` (magic `NWOB`,
/// payload version ``payloadVersion``), JSON-encoded.
///
/// The payload holds what the request needs to be sent again — method, URL, the endpoint's own headers,
/// its body (inline, or the name of a copied body file in the folder's `bodies` subfolder), timeout,
/// deadline, response size limit, acceptable statuses, whether it needs a token — and the outbox's
/// bookkeeping: identity, idempotency key, sequence, group, account, enqueue date, state and failure
/// description. Never a token, an `Authorization` or `Cookie` header, or a secret query value: the
/// snapshot refuses them (``OutboxError/containsSecret(name:)``).
struct OutboxRecord: Codable, Sendable {
    /// The format of the JSON payload; a record of another version reads as damaged.
    static let payloadVersion: UInt8 = 1
    /// The four bytes every outbox record starts with.
    static let magic: [UInt8] = Array("NWOB".utf8)

    /// A mutation's body as stored.
    enum Body: Codable, Sendable {
        /// No body.
        case none
        /// The bytes, in the record.
        case inline(Data)
        /// A file in the folder's `bodies` subfolder, `length` bytes long.
        case file(name: String, length: Int64)
    }

    var id: String
    var idempotencyKey: String
    var sequence: UInt64
    var group: String?
    var account: String?
    var method: String
    var url: String
    var headers: [String: String]
    var body: Body
    var timeout: TimeInterval?
    var deadline: TimeInterval?
    var maximumResponseSize: Int?
    var acceptableStatusCodes: [Int]
    var requiresAuthentication: Bool
    var enqueuedAt: Date
    var state: OutboxMutation.State
    var failure: String?

    /// The record's bytes as a ``DurableRecord``.
    func durableRecord() throws -> DurableRecord {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return DurableRecord(payloadVersion: Self.payloadVersion, payload: try encoder.encode(self))
    }

    /// The record in `durable`, or why it is none.
    static func decode(_ durable: DurableRecord) -> Result<OutboxRecord, DurableRecord.Damage> {
        guard durable.payloadVersion == payloadVersion else { return .failure(.unsupportedPayloadVersion(durable.payloadVersion)) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        do {
            let record = try decoder.decode(OutboxRecord.self, from: durable.payload)
            guard URL(string: record.url) != nil, !record.id.isEmpty, !record.id.contains("/") else { return .failure(.undecodablePayload) }
            if case .file(let name, _) = record.body, name.isEmpty || name.contains("/") || name.hasPrefix(".") {
                return .failure(.undecodablePayload)
            }
            return .success(record)
        } catch {
            return .failure(.undecodablePayload)
        }
    }

    /// The public view of the record, `size` bytes on disk.
    func mutation(size: Int64) -> OutboxMutation {
        OutboxMutation(
            id: OutboxMutation.ID(rawValue: id), idempotencyKey: idempotencyKey, group: group, account: account,
            method: HTTPMethod(rawValue: method), url: URL(string: url) ?? URL(fileURLWithPath: "/"), enqueuedAt: enqueuedAt,
            sequence: sequence, size: size, state: state, failure: failure)
    }
}
