import Foundation

/// The entries of one ``DiskResponseCache`` folder: its index, its bound and its files, shared by every
/// cache on the folder in this process (``DiskCacheFolderOwnership``).
///
/// The first call lists the folder, after taking its lock file and reading (or making) its salt. Until
/// it has them (another process owns the folder, or the folder cannot be used) every call is a miss and
/// every store is dropped; removals still happen, so that an account signed out in one process is gone
/// from the folder another owns. Each later call tries again.
final class DiskCacheFolder: @unchecked Sendable {
    // @unchecked: `index`, `loadState`, `generation`, `lastAccessDate`, `bounds` and `lockDescriptor` are
    // only read and written with `lock` held. Every rename into place and removal of an entry file happens
    // with it held too (only eviction removes files without it, then checks, with it, that it removed no
    // newer entry), so the index names exactly the entry files on disk.
    private let lock = NSLock()
    /// The entry files, most recently used first, each with the generation of its last write; cost: its size.
    var index = RecentlyUsedList<EntryFile, Stamp>()
    private var loadState = LoadState.unloaded
    var generation: UInt64 = 0
    private var lastAccessDate: Int64 = 0
    /// The bounds of the caches on the folder, each with how many caches have it: the folder keeps to the
    /// smallest.
    private var bounds: [Int: Int] = [:]
    /// The open lock file, once the folder is this process's.
    private var lockDescriptor: Int32 = -1

    /// The folder's standardized path.
    let root: String

    init(root: String) {
        self.root = root
    }

    deinit {
        if lockDescriptor >= 0 { close(lockDescriptor) }
        DiskCacheFolderOwnership.forget(root)
    }

    /// Whether the folder is this process's and loaded, with its partition names.
    enum Access {
        case owned(DiskCachePartitionNames)
        case notOwned
    }

    /// The most the entry files may take: the smallest bound of the caches on the folder. Called with the
    /// lock held.
    var currentBound: Int { bounds.keys.min() ?? Int.max }

    /// Counts the bound of a new cache on the folder.
    func register(_ maximumBytes: Int) {
        locked { bounds[maximumBytes, default: 0] += 1 }
    }

    /// Stops counting the bound of a cache that goes.
    func unregister(_ maximumBytes: Int) {
        locked {
            bounds[maximumBytes, default: 1] -= 1
            if bounds[maximumBytes] == 0 { bounds[maximumBytes] = nil }
        }
    }

    /// The entry count and their files' size together (nothing when the folder is not this process's).
    func totals() async -> (count: Int, bytes: Int) {
        guard case .owned = await access() else { return (0, 0) }
        return locked { (index.count, index.totalCost) }
    }

    // MARK: - Entries

    /// The entry stored under `key`, or `nil`; see ``DiskResponseCache/cachedResponse(for:)``.
    func cachedResponse(for key: CacheKey) async -> CachedResponse? {
        guard case .owned(let names) = await access() else { return nil }
        let stored = names.storedKey(key)
        let file = EntryFile(stored)
        guard let (stamp, date, limit) = locked({ index.use(file).map { ($0, nextAccessDate(), currentBound) } }) else { return nil }
        let path = filePath(of: file)
        let entry: DiskCacheEntryFormat.Entry?
        if stamp.size <= Self.inlineReadLimit {
            entry = DiskCacheEntryFormat.load(atPath: path, maximumSize: limit, accessDate: date)
        } else {
            entry = try? await BlockingFileWork.run { _ in DiskCacheEntryFormat.load(atPath: path, maximumSize: limit, accessDate: date) }
        }
        if let entry, entry.key == stored { return entry.response }
        // A file its protection class closes while the device is locked is a miss for now, not a damaged one.
        if entry == nil, Self.isClosedByItsProtection(path) { return nil }
        locked {
            // Unless a store replaced it meanwhile, the file is damaged (or gone): it goes.
            if index.peek(file)?.generation == stamp.generation { removeFile(file) }
        }
        return nil
    }

    /// Stores `response` under `key`; see ``DiskResponseCache/store(_:for:)``. `protect` gives the new,
    /// still empty file its protection class, or says it cannot (the entry is then not written).
    func store(_ response: CachedResponse, for key: CacheKey, protect: @escaping @Sendable (String) -> Bool) async {
        guard case .owned(let names) = await access() else { return }
        let stored = names.storedKey(key)
        // Encoding copies the body and writing may wait for the disk: not on the cooperative pool.
        _ = try? await BlockingFileWork.run { _ in self.write(response, for: stored, to: EntryFile(stored), protect: protect) }
    }

    /// Removes the entry stored under `key`, if any.
    func removeResponse(for key: CacheKey) async {
        switch await access() {
        case .owned(let names):
            locked { removeFile(EntryFile(names.storedKey(key))) }
        case .notOwned where key.partition == nil:
            unlink(filePath(of: EntryFile(key)))
        case .notOwned:
            // Without the salt, no account's file can be found: there is none to remove.
            guard case .found(let names) = DiskCachePartitionNames.load(inFolder: root) else { return }
            unlink(filePath(of: EntryFile(names.storedKey(key))))
        }
    }

    /// Removes every entry of `partition` by removing its subfolder.
    func removeAll(inPartition partition: String?) async {
        let trash: String?
        switch await access() {
        case .owned(let names):
            let folder = names.folder(for: partition)
            trash = locked { () -> String? in
                index.removeAll { $0.folder == folder }
                return moveToTrash(folder)
            }
        case .notOwned:
            let folder: String
            if partition == nil {
                folder = "public"
            } else {
                // Without the salt, no account's folder can be found: there is none to remove.
                guard case .found(let names) = DiskCachePartitionNames.load(inFolder: root) else { return }
                folder = names.folder(for: partition)
            }
            trash = locked { moveToTrash(folder) }
        }
        await removeTrash(trash.map { [$0] } ?? [])
    }

    /// Removes every entry: every partition's subfolder (the folder itself stays).
    func removeAll() async {
        let access = await access()
        let trash = locked { () -> [String] in
            if case .owned = access { index.removeAll() }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            return names.filter { $0 == "public" || DiskCachePartitionNames.isAccountFolderName($0) }.compactMap(moveToTrash)
        }
        await removeTrash(trash)
    }

    // MARK: - Loading

    /// The folder's access, after its first listing (every call waits for it), with the entries over a
    /// bound that shrank (a cache with a smaller one opened the folder) evicted.
    private func access() async -> Access {
        enum Step {
            case ready(DiskCachePartitionNames)
            case wait(Task<Access, Never>)
        }
        let step = locked { () -> Step in
            switch loadState {
            case .loaded(let names):
                return .ready(names)
            case .loading(let task):
                return .wait(task)
            case .unloaded:
                let task = Task { await self.load() }
                loadState = .loading(task)
                return .wait(task)
            }
        }
        switch step {
        case .wait(let task):
            return await task.value
        case .ready(let names):
            let victims = locked { evictionVictims(sparing: nil) }
            if !victims.isEmpty { _ = try? await BlockingFileWork.run { _ in self.removeEvicted(victims) } }
            return .owned(names)
        }
    }

    private func load() async -> Access {
        let found = try? await BlockingFileWork.run { _ in self.claimAndScan() }
        guard let (names, entries) = found ?? nil else {
            locked { loadState = .unloaded }   // the next call tries again
            return .notOwned
        }
        let victims = locked { () -> [EntryFile] in
            for entry in entries.sorted(by: { $0.modified < $1.modified }) {   // the newest last: at the front
                generation += 1
                index.set(Stamp(generation: generation, size: entry.size), cost: entry.size, for: entry.file)
            }
            loadState = .loaded(names)
            return evictionVictims(sparing: nil)   // the bound may be smaller than last time
        }
        _ = try? await BlockingFileWork.run { _ in self.removeEvicted(victims) }
        return .owned(names)
    }

    /// Takes the folder's lock file (creating the folder), reads or makes its salt and lists its entry
    /// files; `nil` when another process owns the folder or it cannot be used. Runs on the blocking queue.
    private func claimAndScan() -> (DiskCachePartitionNames, [FoundFile])? {
        if locked({ lockDescriptor }) < 0 {
            try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            guard let descriptor = DiskCacheFolderOwnership.lock(folder: root) else { return nil }
            locked { lockDescriptor = descriptor }
        }
        switch DiskCachePartitionNames.load(inFolder: root) {
        case .found(let names):
            return (names, scan(droppingOldEntries: false))
        case .unreadable:
            return nil
        case .missingOrDamaged:
            // A new salt: the account folders of the old one (or of a version without) cannot be found. The
            // public entries go too: a version without salt wrote them without a protection class.
            guard let names = DiskCachePartitionNames.create(inFolder: root) else { return nil }
            return (names, scan(droppingOldEntries: true))
        }
    }

    /// The modification date for the next entry file written or read: now, and later than the last one, so
    /// that the order of uses survives a file system whose clock ticks only every few milliseconds. Called
    /// with the lock held.
    func nextAccessDate() -> timespec {
        lastAccessDate = max(Int64(Date().timeIntervalSince1970 * 1e9), lastAccessDate + 1)
        // `clamping`: `time_t` has 32 bits on watchOS (arm64_32), so a date after 2038 is the last it holds.
        return timespec(tv_sec: .init(clamping: lastAccessDate / 1_000_000_000), tv_nsec: .init(lastAccessDate % 1_000_000_000))
    }

    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

extension DiskCacheFolder {
    /// Where an entry's file is: the subfolder of its partition, and the digest of its key.
    struct EntryFile: Hashable, Sendable {
        let folder: String
        let name: String

        init(folder: String, name: String) {
            self.folder = folder
            self.name = name
        }

        /// The file of `key`, a key as stored (``DiskCachePartitionNames/storedKey(_:)``: its partition
        /// is its folder's name), named by the SHA-256 digest of an unambiguous spelling of the whole key.
        init(_ key: CacheKey) {
            folder = key.partition ?? "public"
            let partition = key.partition.map { "\($0.utf8.count):\($0)" } ?? "-"
            name = SHA256.hex("\(partition)\n\(key.method.utf8.count):\(key.method)\n\(key.url)")
        }
    }

    /// An entry's place in the index: the size of its file and the write that made it.
    struct Stamp {
        let generation: UInt64
        let size: Int
    }

    /// An entry file a listing found.
    typealias FoundFile = (file: EntryFile, size: Int, modified: Timestamp)
    typealias Timestamp = (seconds: Int, nanoseconds: Int)

    enum LoadState {
        case unloaded
        case loading(Task<Access, Never>)
        case loaded(DiskCachePartitionNames)
    }
}
