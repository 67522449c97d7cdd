import Foundation
import Networking
import Testing

/// Keys and responses for the cache store tests (memory and disk).
enum CacheFixture {
    /// The key of `path` on a test host, in `partition`.
    static func key(_ path: String, partition: String? = nil, method: String = "GET") -> CacheKey {
        CacheKey(partition: partition, method: method, url: "https://api.example.com/v1/\(path)")
    }

    /// A 200 response for `key` whose body is `bodySize` bytes derived from `seed`, with a few headers and
    /// a variant header; responses of different seeds differ (in their ETag and dates at least).
    static func response(for key: CacheKey, bodySize: Int = 100, seed: Int = 0) -> CachedResponse {
        let start = seed & 0xFF
        let body = bodySize <= 4_096 ? Data(pattern[start..<start + bodySize]) : Data(repeating: UInt8(start), count: bodySize)
        return CachedResponse(
            url: URL(string: key.url) ?? URL(fileURLWithPath: "/"), statusCode: 200,
            headers: ["Content-Type": "application/json", "ETag": "\"v\(seed)\"", "Cache-Control": "max-age=60"], body: body,
            requestDate: Date(timeIntervalSinceReferenceDate: 700_000_000.25 + Double(seed)),
            responseDate: Date(timeIntervalSinceReferenceDate: 700_000_000.5 + Double(seed)),
            variantHeaders: ["accept-language": "ko-KR", "accept": nil])
    }

    /// Bytes that body slices are cut from (computed once: building thousands of bodies byte by byte
    /// would take most of a debug run).
    private static let pattern = Data((0..<(4_096 + 256)).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) })
}

@Suite("MemoryResponseCache", SuiteTimeLimit.oneMinute)
struct MemoryResponseCacheTests {
    @Test func anEntryReadBackIsTheOneStoredAndAMissIsNil() {
        // GIVEN a cache with one entry
        let cache = MemoryResponseCache()
        let key = CacheFixture.key("users/1")
        let response = CacheFixture.response(for: key)
        cache.store(response, for: key)
        // WHEN it is read, and another key is read
        let hit = cache.cachedResponse(for: key)
        let miss = cache.cachedResponse(for: CacheFixture.key("users/2"))
        // THEN the entry comes back equal, the other key misses, and the cost is the entry's
        #expect(hit == response)
        #expect(miss == nil)
        #expect(cache.count == 1)
        #expect(cache.totalCost == response.cost)
    }

    @Test func theLeastRecentlyUsedEntryIsEvictedFirstAndAReadCountsAsAUse() {
        // GIVEN room for three entries of the same cost, holding a, b, c (stored in that order)
        let keys = ["a", "b", "c", "d"].map { CacheFixture.key($0) }
        let responses = keys.map { CacheFixture.response(for: $0) }
        let cache = MemoryResponseCache(maximumBytes: 3 * responses[0].cost)
        for (key, response) in zip(keys, responses).prefix(3) { cache.store(response, for: key) }
        // WHEN a is read, then d is stored
        _ = cache.cachedResponse(for: keys[0])
        cache.store(responses[3], for: keys[3])
        // THEN b, the least recently used, is gone; a (read), c and d stay
        #expect(cache.cachedResponse(for: keys[1]) == nil)
        #expect(cache.cachedResponse(for: keys[0]) == responses[0])
        #expect(cache.cachedResponse(for: keys[2]) == responses[2])
        #expect(cache.cachedResponse(for: keys[3]) == responses[3])
        #expect(cache.totalCost == 3 * responses[0].cost)
    }

    @Test func theEntriesNeverCostMoreThanTheBoundAndTheTotalIsTheSumOfWhatStays() {
        // GIVEN a 20 KB cache
        let cache = MemoryResponseCache(maximumBytes: 20_000)
        var stored: [CacheKey: CachedResponse] = [:]
        for index in 0..<500 {
            // WHEN entries of 0 to 3 KB are stored, some keys again
            let key = CacheFixture.key("items/\(index % 120)")
            let response = CacheFixture.response(for: key, bodySize: (index * 7_919) % 3_000, seed: index)
            cache.store(response, for: key)
            stored[key] = response
            // THEN the bound holds after every store
            #expect(cache.totalCost <= 20_000)
        }
        // THEN every entry still there is the last one stored under its key, and their costs add up to the total
        var sum = 0
        for (key, response) in stored {
            guard let hit = cache.cachedResponse(for: key) else { continue }
            #expect(hit == response)
            sum += hit.cost
        }
        #expect(sum == cache.totalCost)
        #expect(cache.count > 0)
    }

    @Test func anEntryLargerThanTheBoundIsNotStoredAndRemovesTheEntryItWouldReplace() {
        // GIVEN a 5,000-byte cache with a small entry under a key, and another key
        let cache = MemoryResponseCache(maximumBytes: 5_000)
        let key = CacheFixture.key("report")
        let other = CacheFixture.key("other")
        cache.store(CacheFixture.response(for: key), for: key)
        cache.store(CacheFixture.response(for: other), for: other)
        // WHEN a 6,000-byte response is stored under the key
        cache.store(CacheFixture.response(for: key, bodySize: 6_000), for: key)
        // THEN the key misses (the older entry went too) and the other entry stays
        #expect(cache.cachedResponse(for: key) == nil)
        #expect(cache.cachedResponse(for: other) == CacheFixture.response(for: other))
        #expect(cache.count == 1)
    }

    @Test func replacingAnEntryCountsOnlyTheNewCost() {
        // GIVEN an entry of 100 bytes of body
        let cache = MemoryResponseCache()
        let key = CacheFixture.key("users/1")
        cache.store(CacheFixture.response(for: key), for: key)
        // WHEN the same key is stored with 1,000 bytes of body
        let larger = CacheFixture.response(for: key, bodySize: 1_000, seed: 1)
        cache.store(larger, for: key)
        // THEN one entry of the new cost is there
        #expect(cache.count == 1)
        #expect(cache.totalCost == larger.cost)
        #expect(cache.cachedResponse(for: key) == larger)
    }

    @Test func removingAPartitionRemovesExactlyItsEntries() {
        // GIVEN entries of two accounts and public ones, under the same URLs
        let cache = MemoryResponseCache()
        let alice = CacheKey.partition(forAccount: "alice")
        let bob = CacheKey.partition(forAccount: "bob")
        let keys = [alice, bob, nil].flatMap { partition in (0..<3).map { CacheFixture.key("feed/\($0)", partition: partition) } }
        for key in keys { cache.store(CacheFixture.response(for: key), for: key) }
        // WHEN alice's partition is removed
        cache.removeAll(inPartition: alice)
        // THEN only alice's entries miss
        for key in keys { #expect((cache.cachedResponse(for: key) != nil) == (key.partition != alice)) }
        // WHEN the public partition is removed
        cache.removeAll(inPartition: nil)
        // THEN only bob's entries stay
        for key in keys { #expect((cache.cachedResponse(for: key) != nil) == (key.partition == bob)) }
        #expect(cache.count == 3)
        #expect(cache.totalCost == keys.filter { $0.partition == bob }.reduce(0) { $0 + CacheFixture.response(for: $1).cost })
    }

    @Test func removeAllEmptiesTheCacheWhichThenStoresAgain() {
        // GIVEN 100 entries in two partitions
        let cache = MemoryResponseCache()
        for index in 0..<100 {
            let key = CacheFixture.key("items/\(index)", partition: index.isMultiple(of: 2) ? nil : "ab12")
            cache.store(CacheFixture.response(for: key), for: key)
        }
        // WHEN everything is removed, and one entry stored
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.cachedResponse(for: CacheFixture.key("items/0")) == nil)
        let key = CacheFixture.key("items/1", partition: "ab12")
        cache.store(CacheFixture.response(for: key), for: key)
        // THEN the cache holds only that one
        #expect(cache.count == 1)
        #expect(cache.cachedResponse(for: key) == CacheFixture.response(for: key))
    }

    @Test func removingOneEntryLeavesTheOthers() {
        // GIVEN two entries
        let cache = MemoryResponseCache()
        let (first, second) = (CacheFixture.key("a"), CacheFixture.key("b"))
        cache.store(CacheFixture.response(for: first), for: first)
        cache.store(CacheFixture.response(for: second), for: second)
        // WHEN the first is removed (twice: the second time there is nothing to remove)
        cache.removeResponse(for: first)
        cache.removeResponse(for: first)
        // THEN only the second is left
        #expect(cache.cachedResponse(for: first) == nil)
        #expect(cache.cachedResponse(for: second) != nil)
        #expect(cache.totalCost == CacheFixture.response(for: second).cost)
    }

    @Test func twentyThousandEntriesAreStoredAndReadBackInLeastRecentlyUsedOrder() {
        // GIVEN room for 10,000 entries of the same cost
        let keys = (10_000..<30_000).map { CacheFixture.key("items/\($0)") }   // paths of one length: entries of one cost
        let cost = CacheFixture.response(for: keys[0], bodySize: 10).cost
        let cache = MemoryResponseCache(maximumBytes: 10_000 * cost)
        // WHEN 20,000 are stored, the first 10,000 of them read just before the second half is stored
        for key in keys.prefix(10_000) { cache.store(CacheFixture.response(for: key, bodySize: 10), for: key) }
        for key in keys.prefix(10_000) { #expect(cache.cachedResponse(for: key) != nil) }
        for key in keys.suffix(10_000) { cache.store(CacheFixture.response(for: key, bodySize: 10), for: key) }
        // THEN exactly the second half is left, within the bound
        #expect(cache.count == 10_000)
        #expect(cache.totalCost == 10_000 * cost)
        #expect(cache.cachedResponse(for: keys[9_999]) == nil)
        #expect(cache.cachedResponse(for: keys[10_000]) != nil)
    }

    @Test func aThousandTasksStoringReadingAndRemovingAtOnceLeaveAConsistentCache() async {
        // GIVEN a cache with room for about 30 of the 50 keys the tasks share
        let keys = (0..<50).map { CacheFixture.key("shared/\($0)", partition: $0.isMultiple(of: 5) ? "abcd" : nil) }
        let expected = keys.map { CacheFixture.response(for: $0, bodySize: 1_000) }
        let cache = MemoryResponseCache(maximumBytes: 30 * expected[0].cost)
        // WHEN 1,000 tasks each store, read and sometimes remove, through the protocol as the provider does
        let store: any ResponseCache = cache
        let wrongReads = await withTaskGroup(of: Int.self) { group in
            for task in 0..<1_000 {
                group.addTask {
                    let index = (task * 7) % keys.count
                    await store.store(expected[index], for: keys[index])
                    var wrong = 0
                    for offset in 0..<5 {
                        let other = (index + offset * 11) % keys.count
                        if let hit = await store.cachedResponse(for: keys[other]), hit != expected[other] { wrong += 1 }
                    }
                    if task.isMultiple(of: 10) { await store.removeResponse(for: keys[(index + 3) % keys.count]) }
                    if task.isMultiple(of: 250) { await store.removeAll(inPartition: "abcd") }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        // THEN every hit was the response stored under its key, and the bound and the totals hold
        #expect(wrongReads == 0)
        #expect(cache.totalCost <= cache.maximumBytes)
        var sum = 0
        for key in keys {
            if let hit = cache.cachedResponse(for: key) { sum += hit.cost }
        }
        #expect(sum == cache.totalCost)
    }
}
