import Foundation
import Networking
import Testing

/// The regular files below `folder` (relative paths) with their sizes, but the cache's own `.lock` and
/// `.partition-salt`.
private func files(in folder: URL) -> [String: Int] {
    var found: [String: Int] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder.path)
    while let path = enumerator?.nextObject() as? String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(path).path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular, ![".lock", ".partition-salt"].contains(path) else { continue }
        found[path] = (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }
    return found
}

/// The one entry file below `folder`.
private func onlyEntryFile(in folder: URL) throws -> URL {
    let paths = Array(files(in: folder).keys)
    try #require(paths.count == 1)
    return folder.appendingPathComponent(paths[0])
}

/// The size of one entry file of `response`, as a cache reports it.
private func fileSize(of response: CachedResponse, for key: CacheKey) async throws -> Int {
    let folder = try makeScratchFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = DiskResponseCache(directory: folder)
    await cache.store(response, for: key)
    return await cache.byteCount
}

/// A cache in `folder` with room for three and a half entries that stored a, b and c, then read a; with
/// the keys a, b, c and d, and the cache's bound.
private func threeEntriesOfWhichTheFirstWasRead(in folder: URL) async throws -> (DiskResponseCache, [CacheKey], Int) {
    let keys = ["a", "b", "c", "d"].map { CacheFixture.key($0) }
    let size = try await fileSize(of: CacheFixture.response(for: keys[0]), for: keys[0])
    let cache = DiskResponseCache(directory: folder, maximumBytes: 3 * size + size / 2)
    for key in keys.prefix(3) { await cache.store(CacheFixture.response(for: key), for: key) }
    _ = await cache.cachedResponse(for: keys[0])
    return (cache, keys, cache.maximumBytes)
}

@Suite("DiskResponseCache", SuiteTimeLimit.threeMinutes)
struct DiskResponseCacheTests {
    @Test func anEntryIsReadBackEqualFromAFileNamedByADigestInItsPartitionsFolder() async throws {
        // GIVEN a cache in a folder that does not exist yet
        let scratch = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("cache/responses")
        let cache = DiskResponseCache(directory: folder)
        let account = CacheKey.partition(forAccount: "alice@example.com")
        let keys = [CacheFixture.key("me?token=secret-digest", partition: account), CacheFixture.key("news")]
        // WHEN an account's entry and a public one are stored
        for key in keys { await cache.store(CacheFixture.response(for: key), for: key) }
        // THEN both read back equal, a HEAD of the same URL misses, and the files are named by digests only
        for key in keys { #expect(await cache.cachedResponse(for: key) == CacheFixture.response(for: key)) }
        #expect(await cache.cachedResponse(for: CacheFixture.key("news", method: "HEAD")) == nil)
        let paths = files(in: folder).keys.sorted()
        #expect(paths.count == 2)
        #expect(paths.allSatisfy { !$0.contains("news") && !$0.contains("token") && !$0.contains("example") })
        let folders = Set(paths.map { $0.split(separator: "/")[0] })
        #expect(folders.count == 2 && folders.contains("public") && !folders.contains(Substring(account)))   // salted
        #expect(paths.allSatisfy { $0.split(separator: "/")[1].count == 64 })
        #expect(await cache.count == 2)
        #expect(await cache.byteCount == files(in: folder).values.reduce(0, +))
    }

    @Test func tenThousandEntriesStayWithinTheLimitOnDiskAndLeaveNoTemporaryFile() async throws {
        // GIVEN a 5 MiB cache
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let limit = 5 * 1_024 * 1_024
        var onDisk: [String: Int] = [:]
        var seconds = 0.0
        do {
            let cache = DiskResponseCache(directory: folder, maximumBytes: limit)
            // WHEN 10,000 entries of 1 to 2 KB (about 18 MB) are stored by 8 tasks, a tenth of them in an account's partition
            let keys = (0..<10_000).map { CacheFixture.key("items/\($0)", partition: $0.isMultiple(of: 10) ? "0123abcd" : nil) }
            let response: @Sendable (Int) -> CachedResponse = { index in
                CacheFixture.response(for: keys[index], bodySize: 1_024 + (index * 37) % 1_024, seed: index)
            }
            let started = Date()
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for index in stride(from: worker, to: keys.count, by: 8) { await cache.store(response(index), for: keys[index]) }
                    }
                }
            }
            seconds = Date().timeIntervalSince(started)
            // THEN the files on disk take at most the limit, the cache counts exactly them, and none is temporary
            onDisk = files(in: folder)
            let total = onDisk.values.reduce(0, +)
            #expect(total <= limit)
            #expect(total > limit / 2)
            #expect(await cache.byteCount == total)
            #expect(await cache.count == onDisk.count)
            #expect(onDisk.keys.allSatisfy { !$0.contains(".tmp-") })
            // THEN every entry left reads back equal
            var found = 0
            for index in keys.indices {
                guard let hit = await cache.cachedResponse(for: keys[index]) else { continue }
                #expect(hit == response(index))
                found += 1
            }
            #expect(found == onDisk.count)
        }
        // THEN a relaunched cache lists them all on its first use (the first one gone, with its index)
        try await waitUntilNoCacheUses(folder)
        let total = onDisk.values.reduce(0, +)
        let relaunched = DiskResponseCache(directory: folder, maximumBytes: limit)
        let listing = Date()
        #expect(await relaunched.count == onDisk.count)
        let listingSeconds = Date().timeIntervalSince(listing)
        print(
            "DiskResponseCache: 10,000 stores in \(Int(seconds * 1_000)) ms, \(onDisk.count) entries (\(total) bytes) left,",
            "listed again in \(Int(listingSeconds * 1_000)) ms")
    }

    @Test func aSecondCacheOnTheSameFolderReadsEveryEntryBackAsAfterARelaunch() async throws {
        // GIVEN a cache that stored 300 entries in three partitions, with room for about 200
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = (0..<300).map { CacheFixture.key("items/\($0)", partition: [nil, "aa", "Not hex: hashed"][$0 % 3]) }
        let size = try await fileSize(of: CacheFixture.response(for: keys[0], bodySize: 500), for: keys[0])
        var survivors: [CacheKey: CachedResponse] = [:]
        var byteCount = 0
        do {
            let first = DiskResponseCache(directory: folder, maximumBytes: 200 * size)
            for (index, key) in keys.enumerated() { await first.store(CacheFixture.response(for: key, bodySize: 500, seed: index), for: key) }
            for key in keys { survivors[key] = await first.cachedResponse(for: key) }
            byteCount = await first.byteCount
        }
        // WHEN the first is gone and a new cache opens the same folder (a cache while another lives on the
        // folder shares its entries: wait until it has let the folder go)
        try await waitUntilNoCacheUses(folder)
        let second = DiskResponseCache(directory: folder, maximumBytes: 200 * size)
        // THEN it holds the same entries, each equal to what the first read
        #expect(survivors.count > 150)
        #expect(await second.count == survivors.count)
        #expect(await second.byteCount == byteCount)
        for (index, key) in keys.enumerated() {
            let expected = survivors[key] == nil ? nil : CacheFixture.response(for: key, bodySize: 500, seed: index)
            #expect(await second.cachedResponse(for: key) == expected)
        }
    }

    @Test func theOrderOfUseSurvivesARelaunch() async throws {
        // GIVEN a cache with room for three and a half entries that stored a, b, c and then read a
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (keys, limit) = try await { () async throws -> ([CacheKey], Int) in
            let (first, keys, limit) = try await threeEntriesOfWhichTheFirstWasRead(in: folder)
            #expect(await first.count == 3)
            return (keys, limit)
        }()
        try await waitUntilNoCacheUses(folder)   // else the new cache shares the first's index, or finds its lock still held
        // WHEN a new cache on the folder stores d
        let second = DiskResponseCache(directory: folder, maximumBytes: limit)
        await second.store(CacheFixture.response(for: keys[3]), for: keys[3])
        // THEN b, the least recently used before the relaunch, is the one evicted
        #expect(await second.cachedResponse(for: keys[1]) == nil)
        for key in [keys[0], keys[2], keys[3]] { #expect(await second.cachedResponse(for: key) == CacheFixture.response(for: key)) }
    }

    @Test func aReadSavesAnEntryFromEvictionAndAnEntryLargerThanTheLimitIsNotStored() async throws {
        // GIVEN a cache with room for three and a half entries holding a, b, c, of which a was read
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cache, keys, limit) = try await threeEntriesOfWhichTheFirstWasRead(in: folder)
        // WHEN d is stored
        await cache.store(CacheFixture.response(for: keys[3]), for: keys[3])
        // THEN b is evicted, the others stay
        #expect(await cache.cachedResponse(for: keys[1]) == nil)
        #expect(await cache.cachedResponse(for: keys[0]) != nil)
        #expect(await cache.count == 3)
        // WHEN a response larger than the whole limit is stored under a
        await cache.store(CacheFixture.response(for: keys[0], bodySize: limit), for: keys[0])
        // THEN a misses (its older entry went too) and c and d stay
        #expect(await cache.cachedResponse(for: keys[0]) == nil)
        #expect(await cache.count == 2)
        #expect(files(in: folder).count == 2)
    }

    @Test func aDamagedEntryFileIsAMissAndIsRemoved() async throws {
        // GIVEN an entry's intact bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let key = CacheFixture.key("profile")
        let response = CacheFixture.response(for: key, bodySize: 300)
        await cache.store(response, for: key)
        let file = try onlyEntryFile(in: folder)
        let intact = try Data(contentsOf: file)
        var damaged: [(String, Data)] = [("empty", Data()), ("one byte longer", intact + [0])]
        for length in [1, 4, 20, 27, 28, 29, 60, intact.count - 301, intact.count - 300, intact.count - 1] {
            damaged.append(("truncated to \(length)", intact.prefix(length)))
        }
        for offset in [0, 4, 5, 8, 12, 20, 27, 28, 40, intact.count - 301, intact.count - 150, intact.count - 1] {
            var flipped = intact
            flipped[offset] ^= 0x10
            damaged.append(("bit flipped at \(offset)", flipped))
        }
        var version2 = intact
        version2[4] = 2
        damaged.append(("version 2", version2))
        damaged.append(("garbage", Data((0..<intact.count).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 97 &+ 13) })))
        for (damage, bytes) in damaged {
            // WHEN the file is replaced by damaged bytes and read
            await cache.store(response, for: key)
            try bytes.write(to: file)
            let hit = await cache.cachedResponse(for: key)
            // THEN it is a miss, and the file is gone
            #expect(hit == nil, "\(damage)")
            #expect(!FileManager.default.fileExists(atPath: file.path), "\(damage)")
            #expect(await cache.count == 0, "\(damage)")
        }
        // WHEN the file is intact again, THEN it reads back
        await cache.store(response, for: key)
        #expect(await cache.cachedResponse(for: key) == response)
    }

    @Test func aDirectoryWhereAnEntryFileShouldBeIsAMissAndIsRemoved() async throws {
        // GIVEN an entry whose file was replaced by a folder with a file in it
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let key = CacheFixture.key("profile")
        await cache.store(CacheFixture.response(for: key), for: key)
        let file = try onlyEntryFile(in: folder)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: file.appendingPathComponent("inside"))
        // WHEN it is read
        let hit = await cache.cachedResponse(for: key)
        // THEN it is a miss, the folder is gone, and the key can be stored again
        #expect(hit == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        await cache.store(CacheFixture.response(for: key), for: key)
        #expect(await cache.cachedResponse(for: key) == CacheFixture.response(for: key))
    }

    @Test func aFileHoldingAnotherKeyIsAMissAndDamagedFilesFoundAtLaunchAreMisses() async throws {
        // GIVEN two entries, the file of the second overwritten by the first's, then a relaunch
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (a, b) = (CacheFixture.key("a"), CacheFixture.key("b"))
        let fileA: URL
        do {
            let cache = DiskResponseCache(directory: folder)
            await cache.store(CacheFixture.response(for: a), for: a)
            fileA = try onlyEntryFile(in: folder)
            await cache.store(CacheFixture.response(for: b), for: b)
        }
        try await waitUntilNoCacheUses(folder)
        let fileB = try #require(files(in: folder).keys.map { folder.appendingPathComponent($0) }.first { $0 != fileA })
        try FileManager.default.removeItem(at: fileB)
        try FileManager.default.copyItem(at: fileA, to: fileB)
        let relaunched = DiskResponseCache(directory: folder)
        // WHEN both are read
        let hitB = await relaunched.cachedResponse(for: b)
        let hitA = await relaunched.cachedResponse(for: a)
        // THEN b misses (and its file goes), a reads back
        #expect(hitB == nil)
        #expect(hitA == CacheFixture.response(for: a))
        #expect(Array(files(in: folder).keys) == [String(fileA.path.dropFirst(folder.path.count + 1))])
    }

    @Test func temporaryFilesAndTrashACrashLeftBehindAreRemovedAtLaunch() async throws {
        // GIVEN a folder with an entry, a temporary file and a trash folder a crash left, and a file of the user's
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = CacheFixture.key("a")
        await DiskResponseCache(directory: folder).store(CacheFixture.response(for: key), for: key)
        try await waitUntilNoCacheUses(folder)   // else a new cache shares the live one's listing
        let publicFolder = folder.appendingPathComponent("public")
        try Data(repeating: 1, count: 100).write(to: publicFolder.appendingPathComponent(".tmp-3F2504E0"))
        let trash = folder.appendingPathComponent(".trash-3F2504E0")
        try FileManager.default.createDirectory(at: trash.appendingPathComponent("public"), withIntermediateDirectories: true)
        try Data(repeating: 1, count: 100).write(to: trash.appendingPathComponent("public/entry"))
        try Data("keep".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        // WHEN a cache opens the folder
        let cache = DiskResponseCache(directory: folder)
        let count = await cache.count
        // THEN the leftovers are gone, the entry and the user's file stay
        #expect(count == 1)
        #expect(Set(files(in: folder).keys).count == 2)
        #expect(files(in: folder)["notes.txt"] == 4)
        #expect(await cache.cachedResponse(for: key) == CacheFixture.response(for: key))
    }

    @Test func removingAPartitionRemovesItsFolderAndRemoveAllEveryPartition() async throws {
        // GIVEN entries of two accounts and public ones, under the same URLs
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let alice = CacheKey.partition(forAccount: "alice")
        let bob = CacheKey.partition(forAccount: "bob")
        let keys = [alice, bob, nil].flatMap { partition in (0..<3).map { CacheFixture.key("feed/\($0)", partition: partition) } }
        do {
            let first = DiskResponseCache(directory: folder)
            for key in keys { await first.store(CacheFixture.response(for: key), for: key) }
            // WHEN alice's partition is removed
            await first.removeAll(inPartition: alice)
            // THEN only alice's entries miss, and her folder is gone
            for key in keys { #expect(await (first.cachedResponse(for: key) != nil) == (key.partition != alice)) }
            #expect(files(in: folder).count == 6)
        }
        // THEN a relaunch agrees
        try await waitUntilNoCacheUses(folder)
        let cache = DiskResponseCache(directory: folder)
        for key in keys { #expect(await (cache.cachedResponse(for: key) != nil) == (key.partition != alice)) }
        // WHEN the public partition is removed, then everything
        await cache.removeAll(inPartition: nil)
        #expect(await cache.count == 3)
        await cache.removeAll()
        // THEN nothing is left on disk but the folder (with the cache's lock and salt files), which takes new entries
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [".lock", ".partition-salt"])
        #expect(await cache.count == 0)
        #expect(await cache.byteCount == 0)
        await cache.store(CacheFixture.response(for: keys[0]), for: keys[0])
        #expect(await cache.cachedResponse(for: keys[0]) == CacheFixture.response(for: keys[0]))
    }

    @Test func removingOneEntryRemovesItsFile() async throws {
        // GIVEN two entries
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let (a, b) = (CacheFixture.key("a"), CacheFixture.key("b"))
        await cache.store(CacheFixture.response(for: a), for: a)
        await cache.store(CacheFixture.response(for: b), for: b)
        // WHEN a is removed
        await cache.removeResponse(for: a)
        // THEN one file is left, b's
        #expect(await cache.cachedResponse(for: a) == nil)
        #expect(await cache.cachedResponse(for: b) != nil)
        #expect(files(in: folder).count == 1)
    }

    @Test func aSmallerLimitAtRelaunchEvictsTheOldestEntries() async throws {
        // GIVEN 10 entries stored in order
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = (0..<10).map { CacheFixture.key("items/\($0)") }
        let first = DiskResponseCache(directory: folder)
        for key in keys { await first.store(CacheFixture.response(for: key), for: key) }
        let size = await first.byteCount / 10
        // WHEN a cache with room for five opens the folder and is first used
        let second = DiskResponseCache(directory: folder, maximumBytes: 5 * size)
        let byteCount = await second.byteCount
        // THEN the files are within its bound, and the newest entries stayed
        let onDisk = files(in: folder).values.reduce(0, +)
        #expect(onDisk <= 5 * size)
        #expect(byteCount == onDisk)
        #expect(await second.cachedResponse(for: keys[9]) != nil)
        #expect(await second.cachedResponse(for: keys[0]) == nil)
    }

    @Test func storesAndReadsFromHundredsOfTasksEndWithCompleteEntriesOnly() async throws {
        // GIVEN a cache with room for about 40 of the 60 keys the tasks share, each stored in two versions
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = (0..<60).map { CacheFixture.key("shared/\($0)", partition: $0.isMultiple(of: 4) ? "beef" : nil) }
        let versions = keys.map { key in [0, 1].map { CacheFixture.response(for: key, bodySize: 2_000, seed: $0) } }
        let size = try await fileSize(of: versions[0][0], for: keys[0])
        var onDisk: [String: Int] = [:]
        do {
            let cache = DiskResponseCache(directory: folder, maximumBytes: 40 * size)
            // WHEN 400 tasks store, read and remove at once (so the same key is often stored by two at a time)
            let wrongReads = await withTaskGroup(of: Int.self) { group in
                for task in 0..<400 {
                    group.addTask {
                        let index = (task * 7) % keys.count
                        await cache.store(versions[index][task % 2], for: keys[index])
                        var wrong = 0
                        for offset in 0..<3 {
                            let other = (index + offset * 13) % keys.count
                            if let hit = await cache.cachedResponse(for: keys[other]), !versions[other].contains(hit) { wrong += 1 }
                        }
                        if task.isMultiple(of: 25) { await cache.removeResponse(for: keys[(index + 5) % keys.count]) }
                        if task.isMultiple(of: 150) { await cache.removeAll(inPartition: "beef") }
                        return wrong
                    }
                }
                return await group.reduce(0, +)
            }
            // THEN every hit was a whole version of its key; the index, the disk and a relaunch agree
            #expect(wrongReads == 0)
            onDisk = files(in: folder)
            #expect(onDisk.keys.allSatisfy { !$0.contains(".tmp-") && !$0.contains(".trash-") })
            #expect(onDisk.values.reduce(0, +) <= 40 * size)
            #expect(await cache.count == onDisk.count)
            #expect(await cache.byteCount == onDisk.values.reduce(0, +))
        }
        try await waitUntilNoCacheUses(folder)
        let relaunched = DiskResponseCache(directory: folder)
        var found = 0
        for (index, key) in keys.enumerated() {
            guard let hit = await relaunched.cachedResponse(for: key) else { continue }
            #expect(versions[index].contains(hit))
            found += 1
        }
        #expect(found == onDisk.count)
    }

    @Test func theCachesDirectoryCacheIsNamedAndBounded() {
        // GIVEN / WHEN a cache in the caches directory
        let cache = DiskResponseCache.inCachesDirectory(named: "NetworkingTests", maximumBytes: 1_000)
        // THEN its folder is the named subfolder, with the bound asked for (50 MiB by default)
        #expect(cache.directory.lastPathComponent == "NetworkingTests")
        #expect(cache.maximumBytes == 1_000)
        #expect(DiskResponseCache.inCachesDirectory().maximumBytes == 50 * 1_024 * 1_024)
    }
}
