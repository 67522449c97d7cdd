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

/// A ``BackgroundTransferRecordStore`` of one file a record in a folder.
///
/// A file is `NBTR <version> <hex SHA-256 of the payload>\n` and the record's JSON. It is written to a
/// temporary file, flushed (`fsync`), renamed over the old one and the folder flushed: a crash leaves the
/// old record or the new one, never a torn one. A file whose header, version, checksum or JSON is wrong
/// is renamed to `<name>.unreadable` and reported.
package struct BackgroundTransferFileStore: BackgroundTransferRecordStore {
    /// The format's version.
    static let version = 1
    private static let magic = "NBTR"
    private static let suffix = ".record"

    /// The folder of the records.
    package let folder: URL

    /// A store in `folder`, created if missing.
    package init(folder: URL) throws {
        self.folder = folder
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
    }

    package func save(_ record: BackgroundTransferRecord) throws {
        let final = file(for: record.id)
        let temporary = folder.appendingPathComponent(".\(record.id.uuidString).tmp")
        do {
            try Self.encode(record).write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }   // written and flushed below: closing loses nothing
            try handle.synchronize()
        } catch {
            try? FileManager.default.removeItem(at: temporary)   // our own partial file
            throw NetworkError.fileWriteFailed(error)
        }
        guard rename(temporary.path, final.path) == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            try? FileManager.default.removeItem(at: temporary)
            throw NetworkError.fileWriteFailed(error)
        }
        syncFolder()
    }

    package func remove(_ id: UUID) throws {
        let url = file(for: id)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        syncFolder()
    }

    package func loadAll() throws -> (records: [BackgroundTransferRecord], issues: [BackgroundTransferStoreIssue]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        var records: [BackgroundTransferRecord] = []
        var issues: [BackgroundTransferStoreIssue] = []
        for name in names.sorted() {
            let url = folder.appendingPathComponent(name)
            if name.hasPrefix("."), name.hasSuffix(".tmp") {
                try? FileManager.default.removeItem(at: url)   // a write a crash interrupted before its rename
                continue
            }
            guard name.hasSuffix(Self.suffix) else { continue }
            do {
                records.append(try Self.decode(Data(contentsOf: url)))
            } catch {
                issues.append(BackgroundTransferStoreIssue(name: name, reason: (error as? FormatError)?.reason ?? "cannot be read"))
                _ = rename(url.path, url.path + ".unreadable")   // set aside: reported once, kept for a look
            }
        }
        return (records.sorted { $0.createdAt < $1.createdAt }, issues)
    }

    private func file(for id: UUID) -> URL {
        folder.appendingPathComponent(id.uuidString + Self.suffix)
    }

    /// Flushes the folder, so that a rename or removal survives a crash.
    private func syncFolder() {
        let descriptor = open(folder.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)   // best effort: some file systems refuse fsync on a folder
        _ = close(descriptor)
    }

    /// Why a record file could not be read.
    struct FormatError: Error {
        let reason: String
    }

    /// The bytes of `record`'s file.
    static func encode(_ record: BackgroundTransferRecord) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let payload = try encoder.encode(record)
        var data = Data("\(magic) \(version) \(SHA256.hex(SHA256.digest(Array(payload))))\n".utf8)
        data.append(payload)
        return data
    }

    /// The record in `data`, or a ``FormatError`` saying what is wrong.
    static func decode(_ data: Data) throws -> BackgroundTransferRecord {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { throw FormatError(reason: "has no header (torn)") }
        let fields = String(decoding: data[data.startIndex..<newline], as: UTF8.self).split(separator: " ")
        guard fields.count == 3, fields[0] == magic else { throw FormatError(reason: "has no valid header") }
        guard fields[1] == String(version) else { throw FormatError(reason: "has unknown version \(fields[1].prefix(8))") }
        let payload = data[data.index(after: newline)...]
        guard SHA256.hex(SHA256.digest(Array(payload))) == fields[2] else { throw FormatError(reason: "fails its checksum (torn or corrupted)") }
        let decoder = JSONDecoder()
        do {
            return try decoder.decode(BackgroundTransferRecord.self, from: payload)
        } catch {
            throw FormatError(reason: "does not decode")
        }
    }
}
