import Foundation

/// An outbox's folder: its lock, its records and its copied bodies. Every call blocks on the disk (the
/// ``Outbox`` runs them through ``BlockingFileWork``) and is durable when it returns.
///
/// ```
/// <folder>/.lock                 the DurableFolderLock: one outbox at a time, across processes
/// <folder>/records/<id>.mutation one DurableRecord a mutation (magic NWOB)
/// <folder>/bodies/<id>.body      a copied file body or a spooled multipart form
/// ```
///
/// A body is written (and flushed) before the record that names it, and removed after it: a crash leaves
/// at worst a body no record names, removed when the folder is next opened.
struct OutboxStore: Sendable {
    /// What the folder held when it was opened.
    struct Contents: Sendable {
        /// The records that decoded, with the bytes each takes (record and body).
        var records: [(record: OutboxRecord, size: Int64)]
        /// The files that did not.
        var damaged: [OutboxDamagedRecord]
    }

    let folder: URL
    let records: DurableRecordFolder
    let bodies: String

    init(folder: URL) {
        self.folder = folder
        let root = folder.standardizedFileURL.path
        records = DurableRecordFolder(path: root + "/records", magic: OutboxRecord.magic, fileExtension: "mutation")
        bodies = root + "/bodies"
    }

    /// Creates the subfolders, reads every record, and removes the bodies no record names.
    func open() throws(DurabilityError) -> Contents {
        try DurableFile.makeFolder(records.path)
        try DurableFile.makeFolder(bodies)
        let read = try records.read()
        for file in read.damaged {
            // A read error (EIO, a file protected while the device is locked) is not damage: retry later.
            if case .unreadable(let code) = file.damage { throw .failed("read", records.recordPath(file.name), errno: code) }
        }
        var contents = Contents(records: [], damaged: [])
        // Every record file keeps its body, decoded or not: a damaged one (a newer format) may read again.
        var named = Set(read.records.map { $0.name + ".body" } + read.damaged.map { $0.name + ".body" })
        for entry in read.records {
            switch OutboxRecord.decode(entry.record) {
            case .success(var record) where record.id == entry.name:
                var size = Int64(DurableRecord.headerSize + entry.record.payload.count)
                if case .file(let name, let length) = record.body {
                    named.insert(name)
                    guard Self.fileSize(bodyPath(name)) == length else {
                        contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: Int(size), reason: "its body file is missing or torn"))
                        continue
                    }
                    size += length
                }
                if case .inline = record.body { record.body = .inline(Data()) }   // read again when sent: memory stays flat
                contents.records.append((record, size))
            case .success:
                contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: entry.record.payload.count, reason: "its name is not its identity"))
            case .failure(let damage):
                contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: entry.record.payload.count, reason: damage.description))
            }
        }
        contents.damaged += read.damaged.map { OutboxDamagedRecord(name: $0.name, size: $0.size, reason: $0.damage.description) }
        contents.damaged.sort { $0.name < $1.name }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: bodies)) ?? [] where !named.contains(name) {
            unlink(bodies + "/" + name)   // a copy whose record was never written, or whose record is gone
        }
        return contents
    }

    /// Writes `record` (replacing its earlier version) and returns its size on disk.
    @discardableResult
    func write(_ record: OutboxRecord) throws(DurabilityError) -> Int64 {
        let durable: DurableRecord
        do {
            durable = try record.durableRecord()
        } catch {
            throw .failed("encode", records.recordPath(record.id), errno: EINVAL)
        }
        try records.write(durable, named: record.id)
        return Int64(DurableRecord.headerSize + durable.payload.count)
    }

    /// The record of `id` as it is on disk (its inline body included), or why it cannot be read.
    func read(_ id: String) -> Result<OutboxRecord, DurableRecord.Damage> {
        guard let bytes = FileManager.default.contents(atPath: records.recordPath(id)) else { return .failure(.unreadable(errno: ENOENT)) }
        switch DurableRecord.decode(bytes, magic: OutboxRecord.magic) {
        case .success(let durable): return OutboxRecord.decode(durable)
        case .failure(let damage): return .failure(damage)
        }
    }

    /// Removes `record` and then its body file. `durably` (a discard: it must never come back) flushes the
    /// folder; an acknowledged record need not be (a power loss may bring it back, and it is sent again
    /// with its key, which the server answers as before; a killed process cannot bring it back).
    func remove(_ record: OutboxRecord, durably: Bool = true) throws(DurabilityError) {
        try records.remove(named: record.id, syncsFolder: durably)
        if case .file(let name, _) = record.body { try DurableFile.remove(bodyPath(name), syncsFolder: durably) }
    }

    /// Removes the damaged record file `name` (and a body of that name).
    func removeDamaged(_ name: String) throws(DurabilityError) {
        try records.remove(named: name)
        try DurableFile.remove(bodyPath(name + ".body"))
    }

    /// The path of the body file `name`.
    func bodyPath(_ name: String) -> String {
        bodies + "/" + name
    }

    /// The size of the file at `path`, or `nil` when there is none.
    static func fileSize(_ path: String) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }   // missing: nil, as asked
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
