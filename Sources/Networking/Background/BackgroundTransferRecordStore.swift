import Foundation

/// Where a ``BackgroundTransferService`` keeps its ``BackgroundTransferRecord``s. Every call is durable
/// when it returns.
package protocol BackgroundTransferRecordStore: Sendable {
    /// Writes `record`, replacing the one with its id.
    func save(_ record: BackgroundTransferRecord) throws
    /// Removes the record with `id` (nothing when there is none).
    func remove(_ id: UUID) throws
    /// Every readable record, and an issue for each record that could not be read; an unreadable record
    /// is set aside, so that it is reported once.
    func loadAll() throws -> (records: [BackgroundTransferRecord], issues: [BackgroundTransferStoreIssue])
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

    package func save(_ record: BackgroundTransferRecord) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let payload: Data
        do {
            payload = try encoder.encode(record)
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

    package func loadAll() throws -> (records: [BackgroundTransferRecord], issues: [BackgroundTransferStoreIssue]) {
        let contents: DurableRecordFolder.Contents
        do {
            contents = try folder.read()
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        var records: [BackgroundTransferRecord] = []
        var issues: [BackgroundTransferStoreIssue] = []
        var damaged = contents.damaged.map { ($0.name, $0.damage) }
        for entry in contents.records {
            guard entry.record.payloadVersion == Self.payloadVersion else {
                damaged.append((entry.name, .unsupportedPayloadVersion(entry.record.payloadVersion)))
                continue
            }
            do {
                records.append(try JSONDecoder().decode(BackgroundTransferRecord.self, from: entry.record.payload))
            } catch {
                damaged.append((entry.name, .undecodablePayload))
            }
        }
        for (name, damage) in damaged {
            let path = folder.recordPath(name)
            issues.append(BackgroundTransferStoreIssue(name: (path as NSString).lastPathComponent, reason: damage.description))
            _ = rename(path, path + ".unreadable")   // set aside: reported once, kept for a look
        }
        return (records.sorted { $0.createdAt < $1.createdAt }, issues)
    }
}
