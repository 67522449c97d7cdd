import Foundation
import Networking
import Testing

/// The disk format of a kept entry (`CachedResponse.keptUntil`, `CachePolicy.keepForOffline(upTo:)`): version 2
/// for a kept entry, version 1, as before, for every other.
@Suite("DiskResponseCache: kept entries", SuiteTimeLimit.oneMinute)
struct DiskCacheKeptEntryTests {
    /// The entry files below `folder`.
    func entryFiles(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var found: [URL] = []
        while let path = enumerator?.nextObject() as? String {
            let url = folder.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                ![".lock", ".partition-salt"].contains(path)
            else { continue }
            found.append(url)
        }
        return found
    }

    @Test("a kept entry reads back with its keep-until date from a version 2 file; an ordinary one is still version 1")
    func roundTrip() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let (keptKey, plainKey) = (CacheFixture.key("kept"), CacheFixture.key("plain"))
        var kept = CacheFixture.response(for: keptKey)
        kept.keptUntil = Date(timeIntervalSinceReferenceDate: 700_086_400.75)
        await cache.store(kept, for: keptKey)
        await cache.store(CacheFixture.response(for: plainKey), for: plainKey)
        #expect(await cache.cachedResponse(for: keptKey) == kept)
        #expect(await cache.cachedResponse(for: plainKey) == CacheFixture.response(for: plainKey))
        #expect(await cache.cachedResponse(for: plainKey)?.keptUntil == nil)
        let versions = try entryFiles(in: folder).map { try Data(contentsOf: $0)[4] }.sorted()
        #expect(versions == [1, 2])
        // a new cache on the folder (a relaunch) reads both back
        let relaunched = DiskResponseCache(directory: folder)
        #expect(await relaunched.cachedResponse(for: keptKey) == kept)
    }

    @Test("a version 1 file written as earlier versions wrote it reads as an entry that is not kept")
    func readsTheOldFormat() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = DiskResponseCache(directory: folder)
        let key = CacheFixture.key("old")
        var kept = CacheFixture.response(for: key)
        kept.keptUntil = Date(timeIntervalSinceReferenceDate: 700_086_400)
        await cache.store(kept, for: key)   // makes the folder, its salt and the file's name
        let file = try #require(entryFiles(in: folder).first)
        // WHEN an earlier version's file (version 1, built here by the documented layout) replaces it
        let old = CachedResponse(
            url: URL(string: key.url)!, statusCode: 200, headers: ["ETag": "\"old\""], body: Data("{}".utf8),
            requestDate: Date(timeIntervalSinceReferenceDate: 700_000_000), responseDate: Date(timeIntervalSinceReferenceDate: 700_000_001))
        try Self.versionOneFile(old, key: key).write(to: file)
        // THEN it reads back, not kept
        let relaunched = DiskResponseCache(directory: folder)
        #expect(await relaunched.cachedResponse(for: key) == old)
    }

    /// The bytes an earlier version wrote for `response` (no variant headers) under `key`.
    static func versionOneFile(_ response: CachedResponse, key: CacheKey) -> Data {
        var metadata: [UInt8] = []
        func integer(_ value: UInt64, _ count: Int) { for index in 0..<count { metadata.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) } }
        func string(_ text: String) {
            integer(UInt64(text.utf8.count), 4)
            metadata.append(contentsOf: text.utf8)
        }
        metadata.append(0)   // no partition
        string(key.method)
        string(key.url)
        string(response.url.relativeString)
        metadata.append(0)   // no base URL
        integer(UInt64(response.statusCode), 8)
        integer(response.requestDate.timeIntervalSinceReferenceDate.bitPattern, 8)
        integer(response.responseDate.timeIntervalSinceReferenceDate.bitPattern, 8)
        integer(UInt64(response.headers.count), 4)
        for (name, value) in response.headers {
            string(name)
            string(value)
        }
        integer(0, 4)   // no variant headers
        let metadataBytes = metadata
        metadata = Array("NWRC".utf8) + [1, 0, 0, 0]
        integer(UInt64(metadataBytes.count), 4)
        integer(UInt64(response.body.count), 8)
        var checksum: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in metadata + metadataBytes + Array(response.body) { checksum = (checksum ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        integer(checksum, 8)
        return Data(metadata + metadataBytes) + response.body
    }

    @Test("CachedResponse's Codable form: keptUntil round-trips, and an encoding without it decodes as not kept")
    func codable() throws {
        var kept = CacheFixture.response(for: CacheFixture.key("codable"))
        kept.keptUntil = Date(timeIntervalSinceReferenceDate: 700_086_400)
        let data = try JSONEncoder().encode(kept)
        #expect(try JSONDecoder().decode(CachedResponse.self, from: data) == kept)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object.removeValue(forKey: "keptUntil")
        let old = try JSONDecoder().decode(CachedResponse.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.keptUntil == nil)
    }
}
