import Foundation
import Networking
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The durable-record layer the outbox (and the background transfers) keep their state in: atomic writes,
/// checksummed and versioned records, a folder read that skips damaged records without losing their
/// neighbours, and an exclusive folder lock across descriptors and processes.
@Suite("Durable records", SuiteTimeLimit.oneMinute)
struct DurableRecordTests {
    private let magic: [UInt8] = Array("TEST".utf8)

    private func folder(_ url: URL) -> DurableRecordFolder {
        DurableRecordFolder(path: url.path, magic: magic, fileExtension: "rec")
    }

    @Test("CRC-32 matches the published check value of \"123456789\" (0xCBF43926) and continues across chunks")
    func crcCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Array("456789".utf8), continuing: CRC32.checksum(Array("123".utf8))) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test("A record round-trips: magic, versions, length and checksum in a 16-byte header")
    func roundTrip() throws {
        let record = DurableRecord(payloadVersion: 3, payload: Data("hello".utf8))
        let bytes = try #require(record.encoded(magic: magic))
        #expect(bytes.count == DurableRecord.headerSize + 5)
        #expect(Array(bytes.prefix(6)) == magic + [1, 3])
        #expect(DurableRecord.decode(bytes, magic: magic) == .success(record))
    }

    @Test("Every truncation of a record (a torn write) reads as damage, never as a payload")
    func tornRecords() throws {
        let bytes = try #require(DurableRecord(payloadVersion: 1, payload: Data(repeating: 7, count: 40)).encoded(magic: magic))
        for length in 0..<bytes.count {
            guard case .failure(let damage) = DurableRecord.decode(bytes.prefix(length), magic: magic) else {
                Issue.record("\(length) bytes read as a record")
                continue
            }
            #expect(damage == .truncated(expected: length < 16 ? 16 : bytes.count, found: length))
        }
    }

    @Test("Every single flipped bit of a record is detected (header or payload)")
    func flippedBits() throws {
        let bytes = try #require(DurableRecord(payloadVersion: 1, payload: Data("a mutation".utf8)).encoded(magic: magic))
        for index in 0..<bytes.count {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= UInt8(1 << bit)
                guard case .failure = DurableRecord.decode(damaged, magic: magic) else {
                    Issue.record("a flipped bit \(bit) at byte \(index) went unnoticed")
                    continue
                }
            }
        }
    }

    @Test("Another layout version, another magic or trailing bytes read as their own damage")
    func versionsAndMagic() throws {
        var bytes = try #require(DurableRecord(payloadVersion: 1, payload: Data("x".utf8)).encoded(magic: magic))
        #expect(DurableRecord.decode(bytes, magic: Array("OTHR".utf8)) == .failure(.wrongMagic))
        #expect(DurableRecord.decode(bytes + Data([0]), magic: magic) == .failure(.trailingBytes(expected: 17, found: 18)))
        bytes[4] = 2
        #expect(DurableRecord.decode(bytes, magic: magic) == .failure(.unsupportedLayoutVersion(2)))
    }

    @Test("A folder read returns the good records around a torn and a corrupted one, and reports those two")
    func folderSkipsDamaged() throws {
        let url = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: url) }
        let records = folder(url)
        for index in 1...4 { try records.write(DurableRecord(payloadVersion: 1, payload: Data("record \(index)".utf8)), named: "r\(index)") }
        // r2 torn (the first 10 bytes only), r3 with a flipped payload byte, and a stray temporary file
        let r2 = URL(fileURLWithPath: records.recordPath("r2"))
        try Data(try Data(contentsOf: r2).prefix(10)).write(to: r2)
        let r3 = URL(fileURLWithPath: records.recordPath("r3"))
        var bytes = try Data(contentsOf: r3)
        bytes[bytes.count - 1] ^= 0x20
        try bytes.write(to: r3)
        try Data("half".utf8).write(to: url.appendingPathComponent(DurableFile.temporaryPrefix + "x"))

        let contents = try records.read()
        #expect(contents.records.map(\.name) == ["r1", "r4"])
        #expect(contents.records.map { String(decoding: $0.record.payload, as: UTF8.self) } == ["record 1", "record 4"])
        #expect(contents.damaged.map(\.name) == ["r2", "r3"])
        #expect(contents.damaged.map(\.damage) == [.truncated(expected: 16, found: 10), .checksumMismatch])
        #expect(!FileManager.default.fileExists(atPath: url.appendingPathComponent(DurableFile.temporaryPrefix + "x").path))
    }

    @Test("An atomic write replaces the whole file and leaves no temporary file; a copy streams the source")
    func atomicWriteAndCopy() throws {
        let url = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: url) }
        let path = url.appendingPathComponent("file").path
        try DurableFile.write(Data("first".utf8), to: path)
        try DurableFile.write(Data("second".utf8), to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("second".utf8))
        let source = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0) })
        try source.write(to: url.appendingPathComponent("source"))
        let copied = try DurableFile.copy(from: url.appendingPathComponent("source").path, to: url.appendingPathComponent("copy").path)
        #expect(copied == 600_000)
        #expect(try Data(contentsOf: url.appendingPathComponent("copy")) == source)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() == ["copy", "file", "source"])
        #expect(throws: DurabilityError.self) { try DurableFile.copy(from: url.appendingPathComponent("missing").path, to: path) }
    }

    @Test("A second lock on a held folder is refused with folderInUse; after release the folder is free")
    func folderLock() throws {
        let url = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: url) }
        let first = try DurableFolderLock(folder: url.path)
        #expect(throws: DurabilityError.folderInUse(path: url.path)) { try DurableFolderLock(folder: url.path) }
        first.release()
        #expect(!first.isHeld)
        let second = try DurableFolderLock(folder: url.path)
        #expect(second.isHeld)
        second.release()
    }

    @Test("A lock held by another process refuses this one, and is released when that process is killed")
    func folderLockAcrossProcesses() throws {
        let url = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: url) }
        // flock(1) holds the lock file in a child process (util-linux); skip where it is missing.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/flock") else { return }
        let lockFile = url.appendingPathComponent(DurableFolderLock.fileName).path
        let ready = url.appendingPathComponent("ready").path
        let child = Process()
        // The shell opens the lock file, locks it with flock(1) and becomes `sleep`, which holds the lock.
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "exec 9>>'\(lockFile)'; flock -x 9 && touch '\(ready)' && exec sleep 600"]
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: ready) && waited < 60_000 {
            usleep(1_000)
            waited += 1
        }
        try #require(FileManager.default.fileExists(atPath: ready))
        #expect(throws: DurabilityError.folderInUse(path: url.path)) { try DurableFolderLock(folder: url.path) }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        // the kernel releases the lock as the killed process's descriptors close
        var lock: DurableFolderLock?
        for _ in 0..<60_000 where lock == nil {
            lock = try? DurableFolderLock(folder: url.path)
            if lock == nil { usleep(1_000) }
        }
        #expect(lock?.isHeld == true)
    }
}
