import Foundation

/// The files of a ``DiskCacheFolder``: writing an entry, removing entries and subfolders, eviction and the
/// first listing.
extension DiskCacheFolder {
    /// Entries up to this size are read without leaving the calling thread.
    static let inlineReadLimit = 64 * 1_024
    private static let temporaryPrefix = ".tmp-"
    private static let trashPrefix = ".trash-"

    func filePath(of file: EntryFile) -> String {
        "\(root)/\(file.folder)/\(file.name)"
    }

    /// Writes `response` to a temporary file, renames it into place and evicts what the bound requires.
    /// Runs on the blocking queue.
    func write(_ response: CachedResponse, for key: CacheKey, to file: EntryFile, protect: (String) -> Bool) {
        let folder = "\(root)/\(file.folder)"
        let temporary = "\(folder)/\(Self.temporaryPrefix)\(UUID().uuidString)"
        let (date, bound) = locked { (nextAccessDate(), currentBound) }
        guard let bytes = DiskCacheEntryFormat.encode(response, for: key), bytes.count <= bound,
            Self.writeFile(bytes, atPath: temporary, creating: folder, modified: date, protect: protect)
        else {
            locked { removeFile(file) }
            return
        }
        let victims = locked { () -> [EntryFile]? in
            guard Self.moveIntoPlace(temporary, filePath(of: file)) else {
                removeFile(file)
                return nil
            }
            generation += 1
            index.set(Stamp(generation: generation, size: bytes.count), cost: bytes.count, for: file)
            return evictionVictims(sparing: file)
        }
        guard let victims else {
            unlink(temporary)
            return
        }
        removeEvicted(victims)
    }

    /// Writes `bytes` to a new file at `path`, creating `folder` if needed.
    private static func writeFile(_ bytes: Data, atPath path: String, creating folder: String, modified date: timespec, protect: (String) -> Bool) -> Bool {
        if DiskCacheEntryFormat.writeNewFile(bytes, atPath: path, modificationDate: date, protect: protect) { return true }
        // Most likely the folder is not there yet (the first entry of a partition, or after removeAll).
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil else { return false }
        return DiskCacheEntryFormat.writeNewFile(bytes, atPath: path, modificationDate: date, protect: protect)
    }

    /// Renames `temporary` to `destination`, replacing what is there (atomically for a file; a directory
    /// in the way is removed first).
    private static func moveIntoPlace(_ temporary: String, _ destination: String) -> Bool {
        if rename(temporary, destination) == 0 { return true }
        try? FileManager.default.removeItem(atPath: destination)
        return rename(temporary, destination) == 0
    }

    /// Whether the file at `path` is there but may not be opened now: its data protection class while the
    /// device is locked (`EPERM`), or its permissions (`EACCES`). Such a file is not damaged: it stays.
    static func isClosedByItsProtection(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor < 0 else {
            close(descriptor)
            return false
        }
        return isRefusal(errno)
    }

    /// Whether `code`, the `errno` of opening an entry file, says the file is there but refused to us.
    static func isRefusal(_ code: Int32) -> Bool {
        code == EPERM || code == EACCES
    }

    /// Removes `file` from the index and from disk. Called with the lock held.
    func removeFile(_ file: EntryFile) {
        index.remove(file)
        let path = filePath(of: file)
        if unlink(path) != 0, errno != ENOENT {
            try? FileManager.default.removeItem(atPath: path)   // e.g. a directory where the file should be
        }
    }

    /// Renames the subfolder `folder` to a new trash folder and returns the trash folder's path, or `nil`
    /// when there is no such subfolder. Called with the lock held: a store after it starts a new subfolder.
    func moveToTrash(_ folder: String) -> String? {
        let trash = "\(root)/\(Self.trashPrefix)\(UUID().uuidString)"
        if rename("\(root)/\(folder)", trash) == 0 { return trash }
        if errno != ENOENT { try? FileManager.default.removeItem(atPath: "\(root)/\(folder)") }
        return nil
    }

    func removeTrash(_ folders: [String]) async {
        guard !folders.isEmpty else { return }
        _ = try? await BlockingFileWork.run { _ in
            for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
        }
    }

    // MARK: - Eviction

    /// Takes the least recently used entries out of the index until the files take at most 90% of the
    /// bound, when they take more than all of it, and returns them. Called with the lock held.
    func evictionVictims(sparing spared: EntryFile?) -> [EntryFile] {
        let bound = currentBound
        guard index.totalCost > bound else { return [] }
        let target = bound - bound / 10
        var victims: [EntryFile] = []
        while index.totalCost > target, let oldest = index.oldestKey, oldest != spared {
            index.remove(oldest)
            victims.append(oldest)
        }
        return victims
    }

    /// Removes the evicted files without the lock (there may be thousands), then, with it, any of them
    /// stored again meanwhile: that store's file may be the one just removed.
    func removeEvicted(_ victims: [EntryFile]) {
        guard !victims.isEmpty else { return }
        for victim in victims { unlink(filePath(of: victim)) }
        locked {
            for victim in victims where index.contains(victim) { removeFile(victim) }
        }
    }

    // MARK: - Listing

    /// The entry files in the folder, with their sizes and modification dates. Removes the temporary files
    /// and trash folders a crash left behind, anything not a regular file where an entry file should be,
    /// and, when `droppingOldEntries` (the salt is new), every partition's subfolder: an account's cannot
    /// be found with the new salt, and the public one was written by an earlier version (or with a salt
    /// lost since), perhaps with a weaker protection class than asked for now. Called by the folder's owner
    /// only: the temporary files of another would be in the middle of a write.
    func scan(droppingOldEntries: Bool) -> [FoundFile] {
        let manager = FileManager.default
        var found: [FoundFile] = []
        for folder in (try? manager.contentsOfDirectory(atPath: root)) ?? [] {
            let isOld = droppingOldEntries && (folder == "public" || DiskCachePartitionNames.isAccountFolderName(folder))
            if folder.hasPrefix(Self.trashPrefix) || isOld {
                try? manager.removeItem(atPath: "\(root)/\(folder)")
                continue
            }
            guard DiskCachePartitionNames.isFolderName(folder) else { continue }
            for name in (try? manager.contentsOfDirectory(atPath: "\(root)/\(folder)")) ?? [] {
                let path = "\(root)/\(folder)/\(name)"
                if name.hasPrefix(Self.temporaryPrefix) { unlink(path) }
                var status = stat()
                guard name.utf8.count == 64, DiskCachePartitionNames.isHex(name), lstat(path, &status) == 0 else { continue }
                guard status.st_mode & S_IFMT == S_IFREG else {
                    try? manager.removeItem(atPath: path)
                    continue
                }
                #if canImport(Darwin)
                    let modified = status.st_mtimespec
                #else
                    let modified = status.st_mtim
                #endif
                found.append((EntryFile(folder: folder, name: name), Int(clamping: status.st_size), (Int(modified.tv_sec), Int(modified.tv_nsec))))
            }
        }
        return found
    }
}
