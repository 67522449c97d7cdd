// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in the "The disk store" section of Docs/Caching.md: keep each identical to the page.
import Foundation
import Networking
import Testing

/// The page's file protection snippet, as a function of the folder it uses.
private func protectedCache(in folder: URL) -> DiskResponseCache {
let cache = DiskResponseCache(directory: folder, fileProtection: .complete)
return cache
}

@Suite("Docs/Caching.md snippets: the disk store", SuiteTimeLimit.oneMinute)
struct DiskCacheDocSnippetTests {
    @Test func theProtectedCacheStoresAndReadsBackOnThisPlatform() async throws {
        // GIVEN the page's cache with `.complete` (not applied on Linux, which has no protection classes)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = protectedCache(in: folder)
        let key = CacheFixture.key("profile")
        // WHEN it stores an entry, THEN the entry reads back
        await cache.store(CacheFixture.response(for: key), for: key)
        #expect(cache.fileProtection == .complete)
        #expect(await cache.cachedResponse(for: key) == CacheFixture.response(for: key))
    }
}
