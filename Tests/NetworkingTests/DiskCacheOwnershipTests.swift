import Foundation
import Networking
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The entry files below `folder` (relative paths, in the partitions' subfolders) with their sizes.
private func entryFiles(in folder: URL) -> [String: Int] {
    var found: [String: Int] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder.path)
    while let path = enumerator?.nextObject() as? String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(path).path)
        guard path.contains("/"), attributes?[.type] as? FileAttributeType == .typeRegular else { continue }
        found[path] = (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }
    return found
}

/// The names of the subfolders of `folder` that hold an account's entries (all but `public`).
private func accountFolders(in folder: URL) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { !$0.hasPrefix(".") && $0 != "public" }.sorted()
}

/// Stores `keys` with a cache on `folder` that is gone when this returns (as before a relaunch).
private func storeThenClose(_ keys: [CacheKey], in folder: URL) async throws {
    do {
        let cache = DiskResponseCache(directory: folder)
        for key in keys { await cache.store(CacheFixture.response(for: key), for: key) }
    }
    try await waitUntilNoCacheUses(folder)
}

/// Waits until no cache in this process uses `folder` (its lock file is free), so that the next cache on
/// it reads the folder again, as after a relaunch. The last cache on a folder lets it go when its last call
/// has wound down on the thread that ran it, a moment after the call returned.
func waitUntilNoCacheUses(_ folder: URL) async throws {
    for _ in 0..<30_000 {   // 30 s at least: under load the thread that lets go may start late
        let descriptor = open(folder.appendingPathComponent(".lock").path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        let free = flock(descriptor, LOCK_EX | LOCK_NB) == 0
        close(descriptor)   // releases the lock, if taken
        if free { return }
        try await Task.sleep(nanoseconds: 1_000_000)
    }
    Issue.record("a cache still uses \(folder.lastPathComponent)")
}

/// Whether `flag` was set; tasks share it.
private final class Flag: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

@Suite("DiskResponseCache: one owner per folder, salted partition names", SuiteTimeLimit.threeMinutes)
struct DiskCacheOwnershipTests {
    // MARK: - One folder, one owner

    @Test func twoCachesInTheCachesDirectoryShareTheirEntriesAndKeepTheFolderWithinOneBound() async throws {
        // GIVEN two caches made by two inCachesDirectory calls with the same name, both in use, each bounded to
        // about six entries
        let name = "NetworkingTests-\(UUID().uuidString)"
        let keys = (0..<20).map { CacheFixture.key("items/\($0)") }
        let probe = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: probe) }
        let probeCache = DiskResponseCache(directory: probe)
        await probeCache.store(CacheFixture.response(for: keys[0]), for: keys[0])
        let bound = await probeCache.byteCount * 13 / 2
        let first = DiskResponseCache.inCachesDirectory(named: name, maximumBytes: bound)
        let second = DiskResponseCache.inCachesDirectory(named: name, maximumBytes: bound)
        defer { try? FileManager.default.removeItem(at: first.directory) }
        #expect(first.directory == second.directory)
        _ = await first.count
        _ = await second.count
        // WHEN they store twenty entries in turns
        var largest = 0
        for (index, key) in keys.enumerated() {
            await (index.isMultiple(of: 2) ? first : second).store(CacheFixture.response(for: key), for: key)
            largest = max(largest, entryFiles(in: first.directory).values.reduce(0, +))
        }
        // THEN the folder never held more than the one bound, both count the same entries, and each reads
        // the other's latest entry
        #expect(largest <= bound)
        #expect(largest > bound / 2)
        #expect(await first.count == second.count)
        #expect(await first.byteCount == entryFiles(in: first.directory).values.reduce(0, +))
        #expect(await first.cachedResponse(for: keys[19]) == CacheFixture.response(for: keys[19]))
        #expect(await second.cachedResponse(for: keys[18]) == CacheFixture.response(for: keys[18]))
    }

    @Test func cachesOnOneFolderKeepToTheSmallestOfTheirBounds() async throws {
        // GIVEN a cache with the default bound holding ten entries
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = (0..<10).map { CacheFixture.key("items/\($0)") }
        let large = DiskResponseCache(directory: folder)
        for key in keys { await large.store(CacheFixture.response(for: key), for: key) }
        let size = await large.byteCount / 10
        // WHEN a cache with room for five opens the folder while the first lives
        let small = DiskResponseCache(directory: folder, maximumBytes: 5 * size)
        // THEN both keep to its bound, on disk too, the newest entries staying
        #expect(await small.byteCount <= 5 * size)
        #expect(await large.byteCount <= 5 * size)
        #expect(entryFiles(in: folder).values.reduce(0, +) <= 5 * size)
        #expect(await large.cachedResponse(for: keys[9]) != nil)
        #expect(await large.cachedResponse(for: keys[0]) == nil)
    }

    @Test func aCacheOpenedOnTheFolderWhileAnotherWritesRemovesNoneOfItsWrites() async throws {
        // GIVEN a cache in use, with room for everything
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = DiskResponseCache(directory: folder, maximumBytes: 200 * 1_024 * 1_024)
        _ = await writer.count
        let keys = (0..<160).map { CacheFixture.key("large/\($0)") }
        let done = Flag()
        // WHEN four tasks store 160 entries of 256 KiB while new caches open the same folder again and again
        // (a cache's first use lists the folder and removes the temporary files a crash left behind)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { writers in
                    for worker in 0..<4 {
                        writers.addTask {
                            for index in stride(from: worker, to: keys.count, by: 4) {
                                await writer.store(CacheFixture.response(for: keys[index], bodySize: 256 * 1_024, seed: index), for: keys[index])
                            }
                        }
                    }
                }
                done.set()
            }
            group.addTask {
                while !done.isSet {
                    _ = await DiskResponseCache(directory: folder).count
                    await Task.yield()
                }
            }
        }
        // THEN every write of the first cache is there: none had its temporary file removed under it
        var missing = 0
        for (index, key) in keys.enumerated() {
            let expected = CacheFixture.response(for: key, bodySize: 256 * 1_024, seed: index)
            if await writer.cachedResponse(for: key) != expected { missing += 1 }
        }
        #expect(missing == 0)
        #expect(entryFiles(in: folder).count == keys.count)
    }

    @Test func aFolderAnotherProcessOwnsGivesMissesButRemovalsStillHappen() async throws {
        // GIVEN a folder with a public entry and an account's, whose lock file another process holds (as
        // `flock` sees it, another open of the file is another owner)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let alice = CacheKey.partition(forAccount: "alice")
        let (news, profile) = (CacheFixture.key("news"), CacheFixture.key("me", partition: alice))
        try await storeThenClose([news, profile], in: folder)
        let lockFile = open(folder.appendingPathComponent(".lock").path, O_RDONLY | O_CLOEXEC)
        try #require(lockFile >= 0)
        defer { close(lockFile) }
        try #require(flock(lockFile, LOCK_EX | LOCK_NB) == 0)
        // WHEN a cache in this process uses the folder
        let cache = DiskResponseCache(directory: folder)
        let hit = await cache.cachedResponse(for: news)
        await cache.store(CacheFixture.response(for: CacheFixture.key("feed")), for: CacheFixture.key("feed"))
        // THEN it reads nothing and writes nothing
        #expect(hit == nil)
        #expect(await cache.count == 0)
        #expect(entryFiles(in: folder).count == 2)
        // WHEN it removes the account's entries (a sign-out in this process)
        await cache.removeAll(inPartition: alice)
        // THEN they are gone from the folder all the same, and the public one stays
        #expect(entryFiles(in: folder).count == 1)
        #expect(accountFolders(in: folder).isEmpty)
        // WHEN the other process lets the folder go
        flock(lockFile, LOCK_UN)
        // THEN the cache takes it on its next call
        #expect(await cache.cachedResponse(for: news) == CacheFixture.response(for: news))
        #expect(await cache.cachedResponse(for: profile) == nil)
    }

    // MARK: - Salted partition names

    @Test func anAccountsFolderNameIsSaltedPerFolderAndStableAcrossReopening() async throws {
        // GIVEN the same account's entry stored in two cache folders, by caches that are then gone
        let (one, two) = (try makeScratchFolder(), try makeScratchFolder())
        defer {
            try? FileManager.default.removeItem(at: one)
            try? FileManager.default.removeItem(at: two)
        }
        let partition = CacheKey.partition(forAccount: "42")
        let key = CacheFixture.key("me", partition: partition)
        try await storeThenClose([key], in: one)
        try await storeThenClose([key], in: two)
        let (names1, names2) = (accountFolders(in: one), accountFolders(in: two))
        // THEN the folder is named neither by SHA-256 of the account nor of its partition, differs between
        // the two folders, and no file holds the account's unsalted digest
        try #require(names1.count == 1 && names2.count == 1)
        #expect(names1[0].count == 64)
        #expect(names1[0] != partition && names1[0] != CacheKey.partition(forAccount: partition))
        #expect(names1 != names2)
        let bytes = try Data(contentsOf: one.appendingPathComponent(try #require(entryFiles(in: one).keys.first)))
        #expect(bytes.range(of: Data(partition.utf8)) == nil)
        // WHEN a new cache opens the first folder
        let reopened = DiskResponseCache(directory: one)
        // THEN it finds the account's entry, under the same folder name
        #expect(await reopened.cachedResponse(for: key) == CacheFixture.response(for: key))
        await reopened.store(CacheFixture.response(for: key, seed: 1), for: key)
        #expect(accountFolders(in: one) == names1)
        // WHEN the account signs out, THEN its folder is found and removed
        await reopened.removeAll(inPartition: partition)
        #expect(accountFolders(in: one).isEmpty)
        #expect(await reopened.cachedResponse(for: key) == nil)
    }

    @Test(arguments: ["empty", "torn", "flipped", "missing"])
    func aDamagedSaltFileGivesANewSaltAndDropsTheOldEntries(damage: String) async throws {
        // GIVEN a folder with a public entry and an account's, whose salt file is then damaged
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let account = CacheKey.partition(forAccount: "alice")
        let (news, profile) = (CacheFixture.key("news"), CacheFixture.key("me", partition: account))
        try await storeThenClose([news, profile], in: folder)
        let saltFile = folder.appendingPathComponent(".partition-salt")
        var salt = try Data(contentsOf: saltFile)
        try #require(accountFolders(in: folder).count == 1)
        switch damage {
        case "empty": salt = Data()
        case "torn": salt = salt.prefix(salt.count / 2)
        case "flipped": salt[salt.count / 2] ^= 0x01
        default: try FileManager.default.removeItem(at: saltFile)
        }
        if damage != "missing" { try salt.write(to: saltFile) }
        // WHEN a cache opens the folder
        let cache = DiskResponseCache(directory: folder)
        // THEN the account's entry misses and its old folder is gone; the public entry too (a new salt is
        // also the first use by this version of a folder an earlier one filled: its classes may be weaker)
        #expect(await cache.cachedResponse(for: profile) == nil)
        #expect(accountFolders(in: folder).isEmpty)
        #expect(await cache.cachedResponse(for: news) == nil)
        #expect(await cache.count == 0)
        // WHEN the account's entry is stored again, THEN it reads back (after a reopening, too)
        await cache.store(CacheFixture.response(for: profile), for: profile)
        #expect(await cache.cachedResponse(for: profile) == CacheFixture.response(for: profile))
        try #require(accountFolders(in: folder).count == 1)
    }

    @Test func theAccountFoldersOfAVersionWithoutSaltAreRemovedOnFirstUse() async throws {
        // GIVEN a folder laid out by a version without salt: account folders named by the partition itself
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let oldNames = [CacheKey.partition(forAccount: "alice"), "beef"]
        for name in oldNames {
            let subfolder = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 100).write(to: subfolder.appendingPathComponent(String(repeating: "a", count: 64)))
        }
        // WHEN a cache uses the folder
        let cache = DiskResponseCache(directory: folder)
        let count = await cache.count
        // THEN those folders, which no salted name can reach (nor a sign-out clear), are gone
        #expect(count == 0)
        #expect(accountFolders(in: folder).isEmpty)
    }
}
