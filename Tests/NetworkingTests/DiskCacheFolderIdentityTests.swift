import Foundation
import Networking
import Testing

/// Which folder a ``DiskResponseCache`` is on (symbolic links resolved), and what the first use of a
/// folder by this version drops.
@Suite("DiskResponseCache: the folder's identity and a first use", SuiteTimeLimit.oneMinute)
struct DiskCacheFolderIdentityTests {
    @Test func aCacheThroughASymbolicLinkSharesTheEntriesOfTheCacheOnTheFolderItself() async throws {
        // GIVEN a folder and a symbolic link to it (as /var and /private/var on Apple platforms)
        let scratch = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let real = scratch.appendingPathComponent("real", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = scratch.appendingPathComponent("link", isDirectory: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let key = CacheFixture.key("news")
        let direct = DiskResponseCache(directory: real)
        await direct.store(CacheFixture.response(for: key), for: key)
        // WHEN a cache on the link is used while the first lives
        let throughLink = DiskResponseCache(directory: link)
        let hit = await throughLink.cachedResponse(for: key)
        // THEN it is the same folder: it reads the entry, and stores for the other too
        #expect(hit == CacheFixture.response(for: key))
        let other = CacheFixture.key("weather")
        await throughLink.store(CacheFixture.response(for: other), for: other)
        #expect(await direct.cachedResponse(for: other) == CacheFixture.response(for: other))
        #expect(await direct.count == 2)
    }

    @Test func theFirstUseOfAFolderWithoutSaltDropsItsPublicEntriesToo() async throws {
        // GIVEN a folder with a public entry, as a version before salts (and before file protection
        // classes) left it: no salt file
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = CacheFixture.key("news")
        do {
            let old = DiskResponseCache(directory: folder)
            await old.store(CacheFixture.response(for: key), for: key)
        }
        try await waitUntilNoCacheUses(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".partition-salt"))
        // WHEN this version first uses it
        let cache = DiskResponseCache(directory: folder)
        let count = await cache.count
        // THEN the old entry (whose file may have a weaker protection class) is gone, from disk too
        #expect(count == 0)
        #expect(await cache.cachedResponse(for: key) == nil)
        let publicFiles = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("public").path)) ?? []
        #expect(publicFiles.isEmpty)
        // WHEN a new entry is stored, THEN it stays at the next first use (the salt is there now)
        await cache.store(CacheFixture.response(for: key), for: key)
        #expect(await cache.cachedResponse(for: key) == CacheFixture.response(for: key))
    }
}
