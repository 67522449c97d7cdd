import Foundation

/// A ``ResponseCache`` in a folder: entries survive relaunches, up to ``maximumBytes`` of entry files, the
/// least recently used evicted first.
///
/// Each entry is one file, named by the SHA-256 digest of its key (never the URL), in a subfolder per
/// partition: `public` for calls that needed no authentication, for an account's the SHA-256 digest of a
/// random salt the folder keeps (`.partition-salt`, made on first use) and the account's partition. So
/// signing an account out removes one folder, and its name cannot be matched to an account without the
/// salt. A file holds its key (with the salted partition), the response and a checksum (see
/// `DiskCacheEntryFormat`); one that is truncated, damaged or of another version is a miss, and is removed.
/// A salt file that is missing or damaged (or not there yet: a folder an earlier version filled) is replaced
/// by a new salt, and the entries of the old one are removed: the account folders, which can no longer be
/// found, and the public entries, whose files an earlier version gave a weaker protection class.
///
/// - Writes are atomic: an entry is written to a temporary file in its folder and renamed into place, so
///   no reader ever sees half an entry; temporary files a crash left behind are removed at the next launch.
/// - Eviction: after a store that takes the files past ``maximumBytes``, the least recently used entries
///   are removed until they take at most 90% of it (so that a full cache does not evict on every store).
/// - The access order lives in memory and in the files' modification dates (set on every write and read),
///   which the first use after a launch reads back with the sizes by listing the folder: no index file to
///   keep in step or to lose.
/// - File protection: by default the files get the app's default data protection class (the cache sets
///   none); pass a ``FileProtection`` to ask for one. An entry whose class cannot be set is not written.
///   Each cache writes its entries with its own class, also over an entry another cache on the folder
///   wrote: give every cache on a folder the same class.
/// - It never throws: a folder it cannot create or a file it cannot write makes misses.
///
/// One owner per folder. In a process, every cache on a folder (each ``inCachesDirectory(named:maximumBytes:)``
/// call makes one; a path through a symbolic link is the same folder) shares one index: the entries, the
/// bound (the smallest of theirs) and the files being written. Across processes the first to use the
/// folder owns it, through an exclusive `flock` on its `.lock` file, held from its first call until its
/// last cache on the folder goes; a cache in another process meanwhile reads and stores nothing (misses),
/// but still removes what it is asked to.
///
/// - Important: Never put the folder in a shared App Group container: iOS kills a suspended app that
///   holds a file lock in a shared container (exception code `0xdead10cc`), and the cache holds its lock
///   while it lives. The app's own caches directory (``inCachesDirectory(named:maximumBytes:)``) is fine;
///   an app and its extension each keep a cache in their own container.
///
/// ```swift
/// let cache = DiskResponseCache.inCachesDirectory()
/// let provider = NetworkProvider(cache: cache)
/// ```
public final class DiskResponseCache: ResponseCache, Sendable {
    /// The folder of the entries: each partition in a subfolder of its own.
    public let directory: URL
    /// The most the entry files may take together, in bytes. Caches on the same folder keep to the
    /// smallest bound among them.
    public let maximumBytes: Int
    /// The data protection class of the entry files this cache writes.
    public let fileProtection: FileProtection

    /// The folder's entries, shared with the other caches on it.
    private let folder: DiskCacheFolder
    /// Gives a new entry file its protection class (on Apple platforms), or says it cannot.
    private let protect: @Sendable (String) -> Bool

    /// Creates a cache in `directory`, whose files get the app's default data protection class.
    ///
    /// The same as ``init(directory:maximumBytes:fileProtection:)`` with ``FileProtection/inherit``.
    public init(directory: URL, maximumBytes: Int = 50 * 1_024 * 1_024) {
        (self.directory, self.maximumBytes, fileProtection) = (directory, maximumBytes, .inherit)
        protect = { _ in true }   // nothing to set
        folder = Self.register(maximumBytes, on: directory)
    }

    /// Creates a cache in `directory`, which it creates on first use.
    ///
    /// Creating the cache does no file work: the first call lists the folder (a few milliseconds for
    /// thousands of entries) and each later one reads or writes one file. Caches on the same folder share
    /// its entries (see the type's description).
    ///
    /// - Parameters:
    ///   - directory: a folder for this cache alone, in the app's own container (never a shared App Group
    ///     container: see the type's description), e.g. in the caches directory (see
    ///     ``inCachesDirectory(named:maximumBytes:fileProtection:)``). The cache only touches the subfolders
    ///     and files it names (and its `.lock` and `.partition-salt` files), and removes the subfolders in
    ///     ``removeAll()``.
    ///   - maximumBytes: the bound on the entry files' sizes together (each holds the key, the response's
    ///     URL, headers and body, and a few dozen bytes of framing). The default is 50 MiB; an entry file
    ///     larger than the bound is never written.
    ///   - fileProtection: the data protection class of the entry files on iOS, tvOS, watchOS and visionOS;
    ///     ``FileProtection/inherit`` sets none, so they get the app's default class.
    public init(directory: URL, maximumBytes: Int = 50 * 1_024 * 1_024, fileProtection: FileProtection) {
        (self.directory, self.maximumBytes, self.fileProtection) = (directory, maximumBytes, fileProtection)
        protect = { fileProtection.applyOnThisPlatform(toItemAtPath: $0) }
        folder = Self.register(maximumBytes, on: directory)
    }

    /// Creates a cache whose new entry files are given their class by `protect` (tests fake a failure).
    init(directory: URL, maximumBytes: Int, fileProtection: FileProtection, protect: @escaping @Sendable (String) -> Bool) {
        (self.directory, self.maximumBytes, self.fileProtection, self.protect) = (directory, maximumBytes, fileProtection, protect)
        folder = Self.register(maximumBytes, on: directory)
    }

    deinit {
        folder.unregister(maximumBytes)
    }

    /// The shared state of `directory`, its bounds counting `maximumBytes` until this cache goes.
    private static func register(_ maximumBytes: Int, on directory: URL) -> DiskCacheFolder {
        let folder = DiskCacheFolderOwnership.folder(atPath: DiskCacheFolderOwnership.resolvedPath(of: directory))
        folder.register(maximumBytes)
        return folder
    }

    /// A cache in the subfolder `name` of the user's caches directory (the temporary directory where there
    /// is none), which the system may empty when the device runs low on space; its files get the app's
    /// default data protection class.
    ///
    /// Every call with the same `name` gives a cache on the same folder: they share its entries and bound.
    ///
    /// ```swift
    /// let images = DiskResponseCache.inCachesDirectory(named: "Images", maximumBytes: 200 * 1_024 * 1_024)
    /// ```
    public static func inCachesDirectory(named name: String = "Networking", maximumBytes: Int = 50 * 1_024 * 1_024) -> DiskResponseCache {
        inCachesDirectory(named: name, maximumBytes: maximumBytes, fileProtection: .inherit)
    }

    /// A cache in the subfolder `name` of the user's caches directory (the temporary directory where there
    /// is none) whose entry files get the data protection class `fileProtection`.
    ///
    /// ```swift
    /// let cache = DiskResponseCache.inCachesDirectory(fileProtection: .complete)
    /// ```
    public static func inCachesDirectory(
        named name: String = "Networking", maximumBytes: Int = 50 * 1_024 * 1_024, fileProtection: FileProtection
    ) -> DiskResponseCache {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return DiskResponseCache(directory: caches.appendingPathComponent(name, isDirectory: true), maximumBytes: maximumBytes, fileProtection: fileProtection)
    }

    /// How many entries the cache holds (with the other caches on its folder).
    public var count: Int {
        get async { await folder.totals().count }
    }

    /// The size of the entry files together, in bytes: at most ``maximumBytes`` once a store has returned.
    public var byteCount: Int {
        get async { await folder.totals().bytes }
    }

    /// The entry stored under `key`, or `nil`; the entry becomes the most recently used.
    ///
    /// A file that cannot be read back whole, or holds another key, is removed. Entries up to 64 KiB are
    /// read on the calling thread (one short read of a file the system most likely holds in memory); larger
    /// ones on a queue for blocking work, so as not to hold a thread of Swift's cooperative pool.
    public func cachedResponse(for key: CacheKey) async -> CachedResponse? {
        await folder.cachedResponse(for: key)
    }

    /// Stores `response` under `key` as the most recently used entry, then evicts the least recently used
    /// entries if the files take more than ``maximumBytes``. A response whose file would be larger than
    /// ``maximumBytes``, or that cannot be written (its protection class included), is not stored, and the
    /// entry it would have replaced is removed.
    public func store(_ response: CachedResponse, for key: CacheKey) async {
        await folder.store(response, for: key, protect: protect)
    }

    /// Removes the entry stored under `key`, if any.
    public func removeResponse(for key: CacheKey) async {
        await folder.removeResponse(for: key)
    }

    /// Removes every entry of `partition` (`nil`: of calls that needed no authentication) by removing its
    /// subfolder.
    public func removeAll(inPartition partition: String?) async {
        await folder.removeAll(inPartition: partition)
    }

    /// Removes every entry: every partition's subfolder (the folder itself stays).
    public func removeAll() async {
        await folder.removeAll()
    }
}
