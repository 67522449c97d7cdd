import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing, copying and removing files so that a crash or power loss at any instant leaves either the old
/// state or the new one, never a mix: a new file is written under a temporary name in the same folder,
/// flushed (`fsync`), renamed into place (`rename(2)` is atomic within a folder) and the folder flushed,
/// so that the rename itself is on disk when the call returns.
///
/// Temporary files start with ``temporaryPrefix``; a reader skips them and an owner removes them when it
/// opens its folder (``DurableRecordFolder/read(magic:extension:)`` does). These calls block on the disk:
/// call them from ``BlockingFileWork`` or another thread that may block, not from the cooperative pool
/// when they may be slow.
package enum DurableFile {
    /// The prefix of a temporary file a write has not yet renamed into place.
    package static let temporaryPrefix = ".tmp-"

    /// Writes `data` to `path` atomically and durably: when this returns, `path` holds `data` on disk and a
    /// crash before it leaves `path` as it was (a stray temporary file at worst).
    package static func write(_ data: Data, to path: String) throws(DurabilityError) {
        let temporary = temporaryPath(beside: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .failed("open", temporary) }
        do {
            try writeAll(data, to: descriptor, path: temporary)
            try sync(descriptor, path: temporary)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        try closeChecked(descriptor, path: temporary)
        try move(temporary, to: path)
    }

    /// Copies the file at `source` to `path` atomically and durably (streamed in blocks, never held whole).
    /// Returns the number of bytes copied. `shouldStop` is asked between blocks; when it says so the copy
    /// is abandoned (nothing is left at `path`) and `CancellationError` is thrown.
    @discardableResult
    package static func copy(from source: String, to path: String, shouldStop: () -> Bool = { false }) throws -> Int64 {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw DurabilityError.failed("open", source) }
        defer { close(input) }
        let temporary = temporaryPath(beside: path)
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw DurabilityError.failed("open", temporary) }
        var copied: Int64 = 0
        do {
            var buffer = [UInt8](repeating: 0, count: 256 * 1_024)
            while true {
                if shouldStop() { throw CancellationError() }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw DurabilityError.failed("read", source)
                }
                if count == 0 { break }
                try writeAll(Data(buffer[0..<count]), to: output, path: temporary)
                copied += Int64(count)
            }
            try sync(output, path: temporary)
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        try closeChecked(output, path: temporary)
        try move(temporary, to: path)
        return copied
    }

    /// Flushes the file at `path` (written by someone else: a spooled form) to disk.
    package static func syncFile(_ path: String) throws(DurabilityError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .failed("open", path) }
        defer { close(descriptor) }
        try sync(descriptor, path: path)
    }

    /// A new temporary path in the folder of `path`, which ``DurableRecordFolder/read()`` treats as a
    /// write that never finished.
    package static func temporaryPath(beside path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = temporaryPrefix + UUID().uuidString
        return folder.isEmpty ? name : folder + "/" + name
    }

    /// Renames `temporary` to `path` (same folder) and flushes the folder.
    package static func move(_ temporary: String, to path: String) throws(DurabilityError) {
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .failed("rename", path, errno: code)
        }
        try syncFolder(of: path)
    }

    /// Removes the file at `path` (a missing file is not an error). With `syncsFolder` (the default) the
    /// removal is durable when this returns: not even a power loss brings the file back. Without it, a
    /// killed process cannot bring it back either (the kernel has it), but a power loss may: pass `false`
    /// only where a file that comes back is harmless (say, an acknowledged record sent again with its key).
    package static func remove(_ path: String, syncsFolder: Bool = true) throws(DurabilityError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .failed("unlink", path) }
        if syncsFolder { try syncFolder(of: path) }
    }

    /// Flushes the folder that holds `path`, so that a rename or removal in it survives a power loss.
    package static func syncFolder(of path: String) throws(DurabilityError) {
        try syncFolder((path as NSString).deletingLastPathComponent)
    }

    /// Flushes the folder at `folder` (its entries: created, renamed and removed names).
    package static func syncFolder(_ folder: String) throws(DurabilityError) {
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .failed("open", folder) }
        defer { close(descriptor) }
        // A file system that cannot flush a folder (EINVAL) keeps its entries as it can: nothing more to do.
        guard fsync(descriptor) == 0 || errno == EINVAL else { throw .failed("fsync", folder) }
    }

    /// Creates the folder at `path` and its parents when missing, and flushes the parent of each it created.
    package static func makeFolder(_ path: String) throws(DurabilityError) {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw .failed("mkdir", path, errno: ENOTDIR) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try makeFolder(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw .failed("mkdir", path) }
        try syncFolder(of: path)
    }

    /// Writes all of `bytes` to `descriptor` (the file at `path`), again after an interrupted or short write.
    package static func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32, path: String) throws(DurabilityError) {
        let failure: Int32? = bytes.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw .failed("write", path, errno: failure) }
    }

    private static func sync(_ descriptor: Int32, path: String) throws(DurabilityError) {
        #if canImport(Darwin)
            // On Apple platforms fsync does not flush the drive's cache; F_FULLFSYNC does (where supported).
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        guard fsync(descriptor) == 0 else { throw .failed("fsync", path) }
    }

    /// Closes `descriptor` (once, whatever happens: a failed close has still released it) and removes the
    /// file at `path` when the close reports a failed write.
    private static func closeChecked(_ descriptor: Int32, path: String) throws(DurabilityError) {
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw .failed("close", path, errno: code)
        }
    }
}

/// `write(2)`, named so that it is not taken for a method of the enclosing type.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
