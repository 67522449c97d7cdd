import Foundation

/// A ``ResponseCache`` in a folder: entries survive relaunches, up to ``maximumBytes`` of entry files, the
/// least recently used evicted first.
///
/// Each entry is one file, named by the SHA-256 digest of its key (never the URL), in a subfolder per
/// partition: `public` for calls that needed no authentication, the partition digest for an account's.
/// So signing an account out removes one folder. A file holds its key, the response and a checksum (see
/// `DiskCacheEntryFormat`); one that is truncated, damaged or of another version is a miss, and is removed.
///
/// - Writes are atomic: an entry is written to a temporary file in its folder and renamed into place, so
///   no reader ever sees half an entry; temporary files a crash left behind are removed at the next launch.
/// - Eviction: after a store that takes the files past ``maximumBytes``, the least recently used entries
///   are removed until they take at most 90% of it (so that a full cache does not evict on every store).
/// - The access order lives in memory and in the files' modification dates (set on every write and read),
///   which the first use after a launch reads back with the sizes by listing the folder: no index file to
///   keep in step or to lose.
/// - Files are written with the protection `completeUntilFirstUserAuthentication` on iOS, tvOS, watchOS and
///   visionOS: readable after the first unlock, as URLSession's own cache.
/// - It never throws: a folder it cannot create or a file it cannot write makes misses.
///
/// One instance per folder: two caches on the same folder at once (in one or two processes) each keep
/// their own index and bound, and see each other's changes only after a relaunch.
///
/// ```swift
/// let cache = DiskResponseCache.inCachesDirectory()
/// let provider = NetworkProvider(cache: cache)
/// ```
public final class DiskResponseCache: ResponseCache, @unchecked Sendable {
    // @unchecked: `index`, `loadState`, `generation` and `lastAccessDate` are only read and written with `lock` held. Every
    // rename into place and removal of an entry file happens with it held too (only eviction removes files
    // without it, then checks, with it, that it removed no newer entry), so the index names exactly the
    // entry files on disk.
    private let lock = NSLock()
    /// The entry files, most recently used first, each with the generation of its last write; cost: its size.
    private var index = RecentlyUsedList<EntryFile, Stamp>()
    private var loadState = LoadState.unloaded
    private var generation: UInt64 = 0
    private var lastAccessDate: Int64 = 0

    /// The folder of the entries: each partition in a subfolder of its own.
    public let directory: URL
    /// The most the entry files may take together, in bytes.
    public let maximumBytes: Int

    private let root: String

    /// Creates a cache in `directory`, which it creates when it first stores an entry.
    ///
    /// Creating the cache does no file work: the first call lists the folder (a few milliseconds for
    /// thousands of entries) and each later one reads or writes one file.
    ///
    /// - Parameters:
    ///   - directory: a folder for this cache alone, e.g. in the caches directory (see
    ///     ``inCachesDirectory(named:maximumBytes:)``). The cache only touches the subfolders and files it
    ///     names, and removes them all in ``removeAll()``.
    ///   - maximumBytes: the bound on the entry files' sizes together (each holds the key, the response's
    ///     URL, headers and body, and a few dozen bytes of framing). The default is 50 MiB; an entry file
    ///     larger than the bound is never written.
    public init(directory: URL, maximumBytes: Int = 50 * 1_024 * 1_024) {
        self.directory = directory
        self.maximumBytes = maximumBytes
        root = directory.standardizedFileURL.path
    }

    /// A cache in the subfolder `name` of the user's caches directory (the temporary directory where there
    /// is none), which the system may empty when the device runs low on space.
    ///
    /// ```swift
    /// let images = DiskResponseCache.inCachesDirectory(named: "Images", maximumBytes: 200 * 1_024 * 1_024)
    /// ```
    public static func inCachesDirectory(named name: String = "Networking", maximumBytes: Int = 50 * 1_024 * 1_024) -> DiskResponseCache {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return DiskResponseCache(directory: caches.appendingPathComponent(name, isDirectory: true), maximumBytes: maximumBytes)
    }

    /// How many entries the cache holds.
    public var count: Int {
        get async {
            await loadIndexIfNeeded()
            return locked { index.count }
        }
    }

    /// The size of the entry files together, in bytes: at most ``maximumBytes`` once a store has returned.
    public var byteCount: Int {
        get async {
            await loadIndexIfNeeded()
            return locked { index.totalCost }
        }
    }

    /// The entry stored under `key`, or `nil`; the entry becomes the most recently used.
    ///
    /// A file that cannot be read back whole, or holds another key, is removed. Entries up to 64 KiB are
    /// read on the calling thread (one short read of a file the system most likely holds in memory); larger
    /// ones on a queue for blocking work, so as not to hold a thread of Swift's cooperative pool.
    public func cachedResponse(for key: CacheKey) async -> CachedResponse? {
        await loadIndexIfNeeded()
        let file = EntryFile(key)
        guard let (stamp, date) = locked({ index.use(file).map { ($0, nextAccessDate()) } }) else { return nil }
        let (path, limit) = (filePath(of: file), maximumBytes)
        let entry: DiskCacheEntryFormat.Entry?
        if stamp.size <= Self.inlineReadLimit {
            entry = DiskCacheEntryFormat.load(atPath: path, maximumSize: limit, accessDate: date)
        } else {
            entry = try? await BlockingFileWork.run { _ in DiskCacheEntryFormat.load(atPath: path, maximumSize: limit, accessDate: date) }
        }
        if let entry, entry.key == key { return entry.response }
        locked {
            // Unless a store replaced it meanwhile, the file is damaged (or gone): it goes.
            if index.peek(file)?.generation == stamp.generation { removeFile(file) }
        }
        return nil
    }

    /// Stores `response` under `key` as the most recently used entry, then evicts the least recently used
    /// entries if the files take more than ``maximumBytes``. A response whose file would be larger than
    /// ``maximumBytes``, or that cannot be written, is not stored, and the entry it would have replaced is
    /// removed.
    public func store(_ response: CachedResponse, for key: CacheKey) async {
        await loadIndexIfNeeded()
        let file = EntryFile(key)
        // Encoding copies the body and writing may wait for the disk: not on the cooperative pool.
        _ = try? await BlockingFileWork.run { _ in self.write(response, for: key, to: file) }
    }

    /// Removes the entry stored under `key`, if any.
    public func removeResponse(for key: CacheKey) async {
        await loadIndexIfNeeded()
        let file = EntryFile(key)
        locked { removeFile(file) }
    }

    /// Removes every entry of `partition` (`nil`: of calls that needed no authentication) by removing its
    /// subfolder.
    public func removeAll(inPartition partition: String?) async {
        await loadIndexIfNeeded()
        let folder = Self.folderName(for: partition)
        let trash = locked { () -> String? in
            index.removeAll { $0.folder == folder }
            return moveToTrash(folder)
        }
        await removeTrash(trash.map { [$0] } ?? [])
    }

    /// Removes every entry: every partition's subfolder (the folder itself stays).
    public func removeAll() async {
        await loadIndexIfNeeded()
        let trash = locked { () -> [String] in
            index.removeAll()
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            return names.filter(Self.isFolderName).compactMap(moveToTrash)
        }
        await removeTrash(trash)
    }

    // MARK: - Files

    /// Entries up to this size are read without leaving the calling thread.
    private static let inlineReadLimit = 64 * 1_024
    private static let temporaryPrefix = ".tmp-"
    private static let trashPrefix = ".trash-"

    private func filePath(of file: EntryFile) -> String {
        "\(root)/\(file.folder)/\(file.name)"
    }

    /// Writes `response` to a temporary file, renames it into place and evicts what the bound requires.
    /// Runs on the blocking queue.
    private func write(_ response: CachedResponse, for key: CacheKey, to file: EntryFile) {
        let folder = "\(root)/\(file.folder)"
        let temporary = "\(folder)/\(Self.temporaryPrefix)\(UUID().uuidString)"
        guard let bytes = DiskCacheEntryFormat.encode(response, for: key), bytes.count <= maximumBytes,
            Self.writeFile(bytes, atPath: temporary, creating: folder, modified: locked { nextAccessDate() })
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
    private static func writeFile(_ bytes: Data, atPath path: String, creating folder: String, modified date: timespec) -> Bool {
        if DiskCacheEntryFormat.writeNewFile(bytes, atPath: path, modificationDate: date) { return true }
        // Most likely the folder is not there yet (the first entry of a partition, or after removeAll).
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return DiskCacheEntryFormat.writeNewFile(bytes, atPath: path, modificationDate: date)
    }

    /// Renames `temporary` to `destination`, replacing what is there (atomically for a file; a directory
    /// in the way is removed first).
    private static func moveIntoPlace(_ temporary: String, _ destination: String) -> Bool {
        if rename(temporary, destination) == 0 { return true }
        try? FileManager.default.removeItem(atPath: destination)
        return rename(temporary, destination) == 0
    }

    /// Removes `file` from the index and from disk. Called with the lock held.
    private func removeFile(_ file: EntryFile) {
        index.remove(file)
        let path = filePath(of: file)
        if unlink(path) != 0, errno != ENOENT {
            try? FileManager.default.removeItem(atPath: path)   // e.g. a directory where the file should be
        }
    }

    /// Renames the subfolder `folder` to a new trash folder and returns the trash folder's path, or `nil`
    /// when there is no such subfolder. Called with the lock held: a store after it starts a new subfolder.
    private func moveToTrash(_ folder: String) -> String? {
        let trash = "\(root)/\(Self.trashPrefix)\(UUID().uuidString)"
        if rename("\(root)/\(folder)", trash) == 0 { return trash }
        if errno != ENOENT { try? FileManager.default.removeItem(atPath: "\(root)/\(folder)") }
        return nil
    }

    private func removeTrash(_ folders: [String]) async {
        guard !folders.isEmpty else { return }
        _ = try? await BlockingFileWork.run { _ in
            for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
        }
    }

    // MARK: - Eviction

    /// Takes the least recently used entries out of the index until the files take at most 90% of
    /// ``maximumBytes``, when they take more than all of it, and returns them. Called with the lock held.
    private func evictionVictims(sparing spared: EntryFile?) -> [EntryFile] {
        guard index.totalCost > maximumBytes else { return [] }
        let target = maximumBytes - maximumBytes / 10
        var victims: [EntryFile] = []
        while index.totalCost > target, let oldest = index.oldestKey, oldest != spared {
            index.remove(oldest)
            victims.append(oldest)
        }
        return victims
    }

    /// Removes the evicted files without the lock (there may be thousands), then, with it, any of them
    /// stored again meanwhile: that store's file may be the one just removed.
    private func removeEvicted(_ victims: [EntryFile]) {
        guard !victims.isEmpty else { return }
        for victim in victims { unlink(filePath(of: victim)) }
        locked {
            for victim in victims where index.contains(victim) { removeFile(victim) }
        }
    }

    // MARK: - Index

    /// Lists the folder the first time the cache is used; every other call waits for that listing.
    private func loadIndexIfNeeded() async {
        let pending = locked { () -> Task<Void, Never>? in
            switch loadState {
            case .loaded:
                return nil
            case .loading(let task):
                return task
            case .unloaded:
                let task = Task { await self.loadIndex() }
                loadState = .loading(task)
                return task
            }
        }
        await pending?.value
    }

    private func loadIndex() async {
        let found = (try? await BlockingFileWork.run { _ in self.scan() }) ?? []
        let victims = locked { () -> [EntryFile] in
            for entry in found.sorted(by: { $0.modified < $1.modified }) {   // the newest last: at the front
                generation += 1
                index.set(Stamp(generation: generation, size: entry.size), cost: entry.size, for: entry.file)
            }
            loadState = .loaded
            return evictionVictims(sparing: nil)   // the bound may be smaller than last time
        }
        _ = try? await BlockingFileWork.run { _ in self.removeEvicted(victims) }
    }

    /// The entry files in the folder, with their sizes and modification dates. Removes the temporary files
    /// and trash folders a crash left behind, and anything not a regular file where an entry file should be.
    private func scan() -> [(file: EntryFile, size: Int, modified: Timestamp)] {
        let manager = FileManager.default
        var found: [(file: EntryFile, size: Int, modified: Timestamp)] = []
        for folder in (try? manager.contentsOfDirectory(atPath: root)) ?? [] {
            if folder.hasPrefix(Self.trashPrefix) { try? manager.removeItem(atPath: "\(root)/\(folder)") }
            guard Self.isFolderName(folder) else { continue }
            for name in (try? manager.contentsOfDirectory(atPath: "\(root)/\(folder)")) ?? [] {
                let path = "\(root)/\(folder)/\(name)"
                if name.hasPrefix(Self.temporaryPrefix) { unlink(path) }
                var status = stat()
                guard name.utf8.count == 64, Self.isHex(name), lstat(path, &status) == 0 else { continue }
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

    /// The modification date for the next entry file written or read: now, and later than the last one, so
    /// that the order of uses survives a file system whose clock ticks only every few milliseconds. Called
    /// with the lock held.
    private func nextAccessDate() -> timespec {
        lastAccessDate = max(Int64(Date().timeIntervalSince1970 * 1e9), lastAccessDate + 1)
        return timespec(tv_sec: Int(lastAccessDate / 1_000_000_000), tv_nsec: Int(lastAccessDate % 1_000_000_000))
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    // MARK: - Names

    /// The subfolder of `partition`: `public` for none, the partition itself when it is a short
    /// lowercase hexadecimal digest (as ``CacheKey/partition(forAccount:)`` makes), else its digest.
    private static func folderName(for partition: String?) -> String {
        guard let partition else { return "public" }
        return (1...64).contains(partition.utf8.count) && isHex(partition) ? partition : SHA256.hex(partition)
    }

    private static func isFolderName(_ name: String) -> Bool {
        name == "public" || ((1...64).contains(name.utf8.count) && isHex(name))
    }

    private static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}

extension DiskResponseCache {
    /// Where an entry's file is: the subfolder of its partition, and the digest of its key.
    private struct EntryFile: Hashable, Sendable {
        let folder: String
        let name: String

        init(folder: String, name: String) {
            self.folder = folder
            self.name = name
        }

        /// The file of `key`, named by the SHA-256 digest of an unambiguous spelling of the whole key
        /// (``CacheKey/description`` shortens the partition).
        init(_ key: CacheKey) {
            folder = DiskResponseCache.folderName(for: key.partition)
            let partition = key.partition.map { "\($0.utf8.count):\($0)" } ?? "-"
            name = SHA256.hex("\(partition)\n\(key.method.utf8.count):\(key.method)\n\(key.url)")
        }
    }

    /// An entry's place in the index: the size of its file and the write that made it.
    private struct Stamp {
        let generation: UInt64
        let size: Int
    }

    private typealias Timestamp = (seconds: Int, nanoseconds: Int)

    private enum LoadState {
        case unloaded
        case loading(Task<Void, Never>)
        case loaded
    }
}
