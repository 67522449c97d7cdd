import Foundation

/// Where a ``BackgroundTransferService`` keeps its ``BackgroundTransferRecord``s. Every call is durable
/// when it returns.
package protocol BackgroundTransferRecordStore: Sendable {
    /// Writes `record`, with the outcome it ended with when it ended (kept until the app acknowledges
    /// it), replacing the one with its id.
    func save(_ record: BackgroundTransferRecord, settlement: BackgroundTransferSettlement?) throws
    /// Removes the record with `id` (nothing when there is none).
    func remove(_ id: UUID) throws
    /// Every readable record, and an issue for each record that could not be read; an unreadable record
    /// is set aside, so that it is reported once.
    func loadAll() throws -> (records: [BackgroundTransferStoredRecord], issues: [BackgroundTransferStoreIssue])
}

/// A record as stored: the transfer's record, and its outcome once it ended and until the app acknowledges it.
package struct BackgroundTransferStoredRecord: Codable, Sendable {
    /// The transfer's record.
    var record: BackgroundTransferRecord
    /// The outcome it ended with, not yet acknowledged; `nil` while it runs.
    var settlement: BackgroundTransferSettlement?

    private enum CodingKeys: String, CodingKey {
        case settlement = "outcome"
    }

    init(record: BackgroundTransferRecord, settlement: BackgroundTransferSettlement?) {
        self.record = record
        self.settlement = settlement
    }

    // The record's fields and `outcome` side by side in one JSON object: a record of an earlier build
    // (no `outcome`) reads as a running transfer.
    package init(from decoder: any Decoder) throws {
        record = try BackgroundTransferRecord(from: decoder)
        settlement = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(BackgroundTransferSettlement.self, forKey: .settlement)
    }

    package func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(settlement, forKey: .settlement)
    }
}

/// A ``BackgroundTransferRecordStore`` on the package's durable records (``DurableRecordFolder``): one
/// file a record, `<id>.record`, written atomically and flushed, with a checksummed header (magic `NWBT`)
/// and the record's JSON as payload version 1.
///
/// A file that is torn, corrupted, of another version or does not decode is renamed to
/// `<id>.record.unreadable` (kept for a look, never read again) and reported.
package struct BackgroundTransferFileStore: BackgroundTransferRecordStore {
    /// The payload's format: the record's JSON (sorted keys).
    static let payloadVersion: UInt8 = 1
    /// The four bytes every record starts with.
    static let magic = Array("NWBT".utf8)

    private let folder: DurableRecordFolder

    /// A store in `folder`, created if missing.
    package init(folder: URL) throws {
        self.folder = DurableRecordFolder(path: folder.path, magic: Self.magic, fileExtension: "record")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
    }

    package func save(_ record: BackgroundTransferRecord, settlement: BackgroundTransferSettlement?) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let payload: Data
        do {
            payload = try encoder.encode(BackgroundTransferStoredRecord(record: record, settlement: settlement))
        } catch {
            throw NetworkError.encodingFailed(error)
        }
        do {
            try folder.write(DurableRecord(payloadVersion: Self.payloadVersion, payload: payload), named: record.id.uuidString)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
    }

    package func remove(_ id: UUID) throws {
        do {
            try folder.remove(named: id.uuidString)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
    }

    package func loadAll() throws -> (records: [BackgroundTransferStoredRecord], issues: [BackgroundTransferStoreIssue]) {
        let contents: DurableRecordFolder.Contents
        do {
            contents = try folder.read()
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        var records: [BackgroundTransferStoredRecord] = []
        var issues: [BackgroundTransferStoreIssue] = []
        var damaged = contents.damaged.map { ($0.name, $0.damage) }
        for entry in contents.records {
            guard entry.record.payloadVersion == Self.payloadVersion else {
                damaged.append((entry.name, .unsupportedPayloadVersion(entry.record.payloadVersion)))
                continue
            }
            do {
                records.append(try JSONDecoder().decode(BackgroundTransferStoredRecord.self, from: entry.record.payload))
            } catch {
                damaged.append((entry.name, .undecodablePayload))
            }
        }
        for (name, damage) in damaged {
            let path = folder.recordPath(name)
            issues.append(BackgroundTransferStoreIssue(name: (path as NSString).lastPathComponent, reason: damage.description))
            _ = rename(path, path + ".unreadable")   // set aside: reported once, kept for a look
        }
        return (records.sorted { $0.record.createdAt < $1.record.createdAt }, issues)
    }
}
