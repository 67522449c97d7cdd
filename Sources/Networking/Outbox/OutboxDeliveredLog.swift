import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The outbox's list of delivered mutations whose files are not yet removed (`<folder>/delivered.log`):
/// a delivery is acknowledged on disk by appending its record's name here (one short `write(2)` to a
/// file kept open), and the record and body files are removed later, many at once, while the outbox is
/// idle (see ``Outbox/acknowledge(_:response:)``); the log is emptied once they are gone.
///
/// One line an entry: the record's name, a space, the CRC-32 of the name in 8 hexadecimal digits, a line
/// feed. The opening outbox removes the record of every entry that checks and empties the log; an entry
/// that does not check (cut short by a full disk, corrupted on disk) is ignored, so its mutation is sent
/// again with its idempotency key, which the server answers as before: never lost, never applied twice.
///
/// Not flushed to the drive (no `fsync`): a killed process cannot lose an appended entry (the kernel
/// has it); a power loss may, which again only sends the mutation once more with its key. The same
/// contract as the removal it stands for (``DurableFile/remove(_:syncsFolder:)`` without the flush).
final class OutboxDeliveredLog: @unchecked Sendable {
    // @unchecked: `descriptor` is guarded by `lock`.
    private let lock = NSLock()
    private var descriptor: Int32 = -1

    /// The log's path.
    let path: String
    /// Where ``replace(with:)`` writes the new log before renaming it over the old (`delivered.log.new`).
    var replacementPath: String { path + ".new" }

    init(path: String) {
        self.path = path
    }

    deinit {
        if descriptor >= 0 { closeDescriptor(descriptor) }
    }

    /// Appends the entry of `name` (one write; the file is opened on the first).
    func append(_ name: String) throws(DurabilityError) {
        let line = Self.line(name)
        lock.lock()
        defer { lock.unlock() }
        if descriptor < 0 {
            descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw .failed("open", path) }
        }
        try DurableFile.writeAll(line, to: descriptor, path: path)
    }

    /// Leaves in the log the entries of `names` only (the files of the others are gone): empties it when
    /// there are none, otherwise writes them to a new file renamed over it (no flush: a crash leaves the old
    /// log or the new one, and either names only mutations that were delivered).
    func replace(with names: [String]) throws(DurabilityError) {
        lock.lock()
        defer { lock.unlock() }
        guard !names.isEmpty else {
            let emptied = descriptor >= 0 ? ftruncate(descriptor, 0) == 0 : truncate(path, 0) == 0 || errno == ENOENT
            guard emptied else { throw .failed("truncate", path) }
            return
        }
        let temporary = replacementPath   // one name: the folder has one owner, and a stray one is overwritten
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw .failed("open", temporary) }
        do {
            try DurableFile.writeAll(names.flatMap(Self.line), to: file, path: temporary)
        } catch {
            closeDescriptor(file)
            unlink(temporary)
            throw error
        }
        closeDescriptor(file)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .failed("rename", path, errno: code)
        }
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1   // the next append opens the new file
    }

    /// Closes the file (the outbox closes); a later append opens it again.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
    }

    /// The names of the entries that check; none when there is no log, or none that can be read: the
    /// mutations it named are then sent again with their keys (a duplicate at worst, never a loss), and
    /// something else than a file at its path (a folder) is removed, so that the log can be written again.
    func names() -> Set<String> {
        var status = stat()
        guard lstat(path, &status) == 0 else { return [] }   // no log (ENOENT), or none to reach
        guard status.st_mode & S_IFMT == S_IFREG else {
            do { try FileManager.default.removeItem(atPath: path) } catch {}   // not ours to read; appends would fail on it
            return []
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            return []
        }
        var names = Set<String>()
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let name = Self.name(in: line) { names.insert(name) }
        }
        return names
    }

    /// The entry of `name`: its bytes, a space, their CRC-32 in 8 lowercase hexadecimal digits, a line feed.
    static func line(_ name: String) -> [UInt8] {
        var line = [UInt8]()
        line.reserveCapacity(name.utf8.count + 10)
        line.append(contentsOf: name.utf8)
        let checksum = CRC32.checksum(line)
        line.append(UInt8(ascii: " "))
        for shift in stride(from: 28, through: 0, by: -4) {
            let digit = UInt8((checksum >> UInt32(shift)) & 0xF)
            line.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// The name an entry's line (without its line feed) holds, or `nil` when it does not check.
    static func name(in line: Data.SubSequence) -> String? {
        guard let space = line.lastIndex(of: UInt8(ascii: " ")), line.endIndex - space == 9,
            line[(space + 1)...].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
            let checksum = UInt32(String(decoding: line[(space + 1)...], as: UTF8.self), radix: 16)
        else { return nil }
        let name = line[line.startIndex..<space]
        guard !name.isEmpty, !name.contains(UInt8(ascii: "/")), CRC32.checksum(name) == checksum else { return nil }
        return String(decoding: name, as: UTF8.self)
    }
}

/// `close(2)`, named so that it is not taken for the log's own ``OutboxDeliveredLog/close()``.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
