import Foundation

/// An outbox's folder: its lock, its records and its copied bodies. Every call blocks on the disk (the
/// ``Outbox`` runs them through ``BlockingFileWork``) and is durable when it returns.
///
/// ```
/// <folder>/.lock                 the DurableFolderLock: one outbox at a time, across processes
/// <folder>/records/<id>.mutation one DurableRecord a mutation (magic NWOB)
/// <folder>/bodies/<id>.body      a copied file body or a spooled multipart form
/// <folder>/delivered.log         the delivered mutations whose files are not yet removed (OutboxDeliveredLog)
/// ```
///
/// A body is written (and flushed) before the record that names it, and removed after it: a crash leaves
/// at worst a body no record names, removed when the folder is next opened.
struct OutboxStore: Sendable {
    /// What the folder held when it was opened.
    struct Contents: Sendable {
        /// The records that decoded.
        var records: [Loaded]
        /// The files that did not.
        var damaged: [OutboxDamagedRecord]
    }

    /// A record as read: the bytes it takes (record and body), whether its body is in memory.
    struct Loaded: Sendable {
        var record: OutboxRecord
        var size: Int64
        var isWhole: Bool
    }

    /// Removes a file (``DurableFile/remove(_:syncsFolder:)``): a test puts one that fails in its place.
    typealias FileRemoval = @Sendable (_ path: String, _ syncsFolder: Bool) throws(DurabilityError) -> Void

    let folder: URL
    let records: DurableRecordFolder
    let bodies: String
    let delivered: OutboxDeliveredLog
    let removeFile: FileRemoval

    init(folder: URL, removeFile: @escaping FileRemoval = OutboxStore.removeFileDurably) {
        self.folder = folder
        self.removeFile = removeFile
        let root = folder.standardizedFileURL.path
        records = DurableRecordFolder(path: root + "/records", magic: OutboxRecord.magic, fileExtension: "mutation")
        bodies = root + "/bodies"
        delivered = OutboxDeliveredLog(path: root + "/delivered.log")
    }

    /// Creates the subfolders, reads the records one at a time (memory stays flat: an inline body is kept
    /// only within `inlineBudget` bytes, see ``keepsInline(_:budget:)``), removes the records the delivered
    /// log names (then empties it) and the bodies no record names.
    ///
    /// - Throws: a read error (EIO, a file protected while the device is locked) fails the opening: it is
    ///   no damage, and the next opening may read it; nothing but delivered records is removed.
    func open(inlineBudget: Int64) throws(DurabilityError) -> Contents {
        try DurableFile.makeFolder(records.path)
        try DurableFile.makeFolder(bodies)
        var contents = Contents(records: [], damaged: [])
        var named = Set<String>()   // every record file keeps its body, decoded or not (a newer format may read again)
        var budget = inlineBudget
        let delivered = self.delivered.names()
        var removedAll = true   // every delivered record's file removed: the log is emptied
        try records.forEachFile { file throws(DurabilityError) in
            if delivered.contains(file.name) {   // acknowledged: its body goes with the unnamed ones below
                do { try removeFile(records.recordPath(file.name), false) } catch { removedAll = false }
                return
            }
            switch file {
            case .damaged(let damaged):
                if case .unreadable(let code) = damaged.damage { throw .failed("read", records.recordPath(damaged.name), errno: code) }
                named.insert(damaged.name + ".body")
                contents.damaged.append(OutboxDamagedRecord(name: damaged.name, size: damaged.size, reason: damaged.damage.description))
            case .record(let entry):
                named.insert(entry.name + ".body")
                let size = Int64(DurableRecord.headerSize + entry.record.payload.count)
                switch OutboxRecord.decode(entry.record) {
                case .success(var record) where record.id == entry.name:
                    if case .file(let name, let length) = record.body {
                        named.insert(name)
                        guard Self.fileSize(bodyPath(name)) == length else {
                            contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: Int(size), reason: "its body file is missing or torn"))
                            return
                        }
                        contents.records.append(Loaded(record: record, size: size + length, isWhole: true))
                        return
                    }
                    let isWhole = Self.keepsInline(&record, budget: &budget)
                    contents.records.append(Loaded(record: record, size: size, isWhole: isWhole))
                case .success:
                    contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: Int(size), reason: "its name is not its identity"))
                case .failure(let damage):
                    contents.damaged.append(OutboxDamagedRecord(name: entry.name, size: Int(size), reason: damage.description))
                }
            }
        }
        contents.damaged.sort { $0.name < $1.name }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: bodies)) ?? [] where !named.contains(name) {
            unlink(bodies + "/" + name)   // a copy whose record was never written, or whose record is gone
        }
        unlink(self.delivered.replacementPath)   // a replacement a crash left unrenamed: the log is whole without it
        if removedAll, !delivered.isEmpty {
            // Not emptied (a disk error): the entries name files that are gone, and the next opening reads them again.
            do { try self.delivered.replace(with: []) } catch {}
        }
        return contents
    }

    /// Keeps `record`'s inline body in memory when it is small (at most ``largestKeptInline`` bytes) and
    /// `budget` allows (then it is sent with no read); otherwise drops it (read again when sent). Returns
    /// whether the record is whole in memory.
    static func keepsInline(_ record: inout OutboxRecord, budget: inout Int64) -> Bool {
        guard case .inline(let data) = record.body else { return true }
        if data.count <= largestKeptInline, Int64(data.count) <= budget {
            budget -= Int64(data.count)
            return true
        }
        record.body = .inline(Data())
        return false
    }

    /// The largest inline body kept in memory.
    static let largestKeptInline = 16 * 1_024

    /// Writes `record` (replacing its earlier version) and returns its size on disk.
    @discardableResult
    func write(_ record: OutboxRecord) throws(DurabilityError) -> Int64 {
        let durable = try encode(record)
        try records.write(durable, named: record.id)
        return Int64(DurableRecord.headerSize + durable.payload.count)
    }

    /// `record` as it is written.
    func encode(_ record: OutboxRecord) throws(DurabilityError) -> DurableRecord {
        do {
            return try record.durableRecord()
        } catch {
            throw .failed("encode", records.recordPath(record.id), errno: EINVAL)
        }
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
        try remove(RecordFiles(record), durably: durably)
    }

    /// The files of a record: its name and its body file's, if any (what removing it takes, and no more).
    struct RecordFiles: Sendable {
        let name: String
        let bodyFile: String?

        init(_ record: OutboxRecord) {
            name = record.id
            if case .file(let file, _) = record.body { bodyFile = file } else { bodyFile = nil }
        }
    }

    /// Removes the files `files` names.
    func remove(_ files: RecordFiles, durably: Bool) throws(DurabilityError) {
        try removeFile(records.recordPath(files.name), durably)
        if let body = files.bodyFile { try removeFile(bodyPath(body), durably) }
    }

    /// Removes the damaged record file `name` (and a body of that name).
    func removeDamaged(_ name: String) throws(DurabilityError) {
        try removeFile(records.recordPath(name), true)
        try removeFile(bodyPath(name + ".body"), true)
    }

    /// The path of the body file `name`.
    func bodyPath(_ name: String) -> String {
        bodies + "/" + name
    }

    /// ``DurableFile/remove(_:syncsFolder:)``: how a store removes files unless told otherwise.
    static let removeFileDurably: FileRemoval = { path, syncsFolder throws(DurabilityError) in
        try DurableFile.remove(path, syncsFolder: syncsFolder)
    }

    /// The size of the file at `path`, or `nil` when there is none.
    static func fileSize(_ path: String) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }   // missing: nil, as asked
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
