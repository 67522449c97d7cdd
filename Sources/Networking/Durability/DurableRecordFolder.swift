import Foundation

/// A folder of durable records, one record a file: a record is written, replaced and removed on its own
/// (``DurableFile``), so a torn or corrupted file damages that record only, never the ones around it.
///
/// Reading the folder returns every record that decodes and, beside them, every file that should have
/// been a record but is not (torn, flipped, another version), with the reason: the owner reports them and
/// decides what happens to them; nothing is removed but stray temporary files of writes that never
/// finished (they were never the truth).
package struct DurableRecordFolder: Sendable {
    /// A record read from the folder, with its file's name.
    package struct Entry: Sendable {
        /// The file's name in the folder.
        package let name: String
        /// The record.
        package let record: DurableRecord
    }

    /// A file that is not a record, with its name, size and the reason.
    package struct DamagedFile: Sendable, Equatable {
        /// The file's name in the folder.
        package let name: String
        /// The file's size in bytes.
        package let size: Int
        /// Why it is not a record.
        package let damage: DurableRecord.Damage
    }

    /// What a read found: the records in name order, and the damaged files in name order.
    package struct Contents: Sendable {
        /// The records that decoded.
        package var records: [Entry]
        /// The files that did not.
        package var damaged: [DamagedFile]
    }

    /// The folder's path.
    package let path: String
    /// The four bytes every record of the folder starts with.
    package let magic: [UInt8]
    /// The file-name extension of the records (without the dot); other files are not records.
    package let fileExtension: String

    /// The folder at `path` whose records start with `magic` and end their names with `.fileExtension`.
    package init(path: String, magic: [UInt8], fileExtension: String) {
        self.path = path
        self.magic = magic
        self.fileExtension = fileExtension
    }

    /// The path of the record named `name` (without the extension).
    package func recordPath(_ name: String) -> String {
        "\(path)/\(name).\(fileExtension)"
    }

    /// Writes `record` as `name` (without the extension), atomically and durably, replacing any record of
    /// that name. Throws ``DurabilityError`` when the disk refuses; a payload above
    /// ``DurableRecord/maximumPayloadSize`` is refused as `EFBIG`.
    package func write(_ record: DurableRecord, named name: String) throws(DurabilityError) {
        let path = recordPath(name)
        guard let bytes = record.encoded(magic: magic) else { throw .failed("write", path, errno: EFBIG) }
        try DurableFile.write(bytes, to: path)
    }

    /// Removes the record `name` (without the extension), durably unless `syncsFolder` is `false` (see
    /// ``DurableFile/remove(_:syncsFolder:)``).
    package func remove(named name: String, syncsFolder: Bool = true) throws(DurabilityError) {
        try DurableFile.remove(recordPath(name), syncsFolder: syncsFolder)
    }

    /// One file of the folder as ``forEachFile(_:)`` reads it.
    package enum File: Sendable {
        /// A record that decoded.
        case record(Entry)
        /// A file that did not.
        case damaged(DamagedFile)

        /// The record's name (its file's, without the extension).
        package var name: String {
            switch self {
            case .record(let entry): return entry.name
            case .damaged(let damaged): return damaged.name
            }
        }
    }

    /// Reads every record of the folder (the folder missing reads as empty), removing stray temporary files.
    package func read() throws(DurabilityError) -> Contents {
        var contents = Contents(records: [], damaged: [])
        try forEachFile { file in
            switch file {
            case .record(let entry): contents.records.append(entry)
            case .damaged(let damaged): contents.damaged.append(damaged)
            }
        }
        return contents
    }

    /// Reads the folder's files one at a time, in name order, handing each to `body` (only one file's bytes
    /// are held at a time: memory stays flat however many records there are); removes stray temporary files.
    package func forEachFile(_ body: (File) throws(DurabilityError) -> Void) throws(DurabilityError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            if !FileManager.default.fileExists(atPath: path) { return }
            throw .failed("opendir", path, errno: EIO)
        }
        let suffix = "." + fileExtension
        for file in names {
            if file.hasPrefix(DurableFile.temporaryPrefix) {
                unlink("\(path)/\(file)")   // a write that never finished: never the truth
                continue
            }
            guard file.hasSuffix(suffix), file.count > suffix.count else { continue }
            let name = String(file.dropLast(suffix.count))
            try body(readFile(name: name, at: "\(path)/\(file)"))
        }
    }

    /// The record in the file at `filePath`, or why it is none.
    private func readFile(name: String, at filePath: String) -> File {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: filePath))
        } catch {
            return .damaged(DamagedFile(name: name, size: 0, damage: .unreadable(errno: Self.errnoCode(of: error))))
        }
        switch DurableRecord.decode(bytes, magic: magic) {
        case .success(let record): return .record(Entry(name: name, record: record))
        case .failure(let damage): return .damaged(DamagedFile(name: name, size: bytes.count, damage: damage))
        }
    }

    private static func errnoCode(of error: any Error) -> Int32 {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain { return Int32(underlying.code) }
        return EIO
    }
}
