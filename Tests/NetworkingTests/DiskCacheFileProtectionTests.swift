import Foundation
import Testing

@testable import Networking

private struct AttributesRejected: Error {}

@Suite("DiskResponseCache: file protection", SuiteTimeLimit.oneMinute)
struct DiskCacheFileProtectionTests {
    @Test func inheritSetsNoAttributeAndEachAskedClassSetsItsProtectionKey() {
        // GIVEN / WHEN the attributes each option gives a new entry file
        let asked: [(DiskResponseCache.FileProtection, FileProtectionType)] = [
            (.complete, .complete), (.completeUnlessOpen, .completeUnlessOpen),
            (.completeUntilFirstUserAuthentication, .completeUntilFirstUserAuthentication), (.none, .none),
        ]
        // THEN inherit sets nothing (the app's default class applies), the others their own class
        #expect(DiskResponseCache.FileProtection.inherit.fileAttributes.isEmpty)
        for (option, type) in asked {
            #expect(option.fileAttributes.count == 1, "\(option)")
            let set = option.fileAttributes[.protectionKey] as? FileProtectionType
            #expect(set?.rawValue == type.rawValue, "\(option)")
        }
        #expect(Set(asked.map(\.0.description) + ["inherit"]).count == 5)
    }

    @Test func applyingInheritCallsNothingAndAFailureToSetAnAskedClassForbidsTheWrite() {
        // GIVEN a recorder of the attributes set
        var calls: [String] = []
        let record: ([FileAttributeKey: Any], String) throws -> Void = { attributes, path in
            calls.append("\(path): \(attributes[.protectionKey].map { "\($0)" } ?? "-")")
        }
        // WHEN inherit and complete are applied, and complete where setting it fails
        let inherit = DiskResponseCache.FileProtection.inherit.apply(toItemAtPath: "/a", setAttributes: record)
        let complete = DiskResponseCache.FileProtection.complete.apply(toItemAtPath: "/b", setAttributes: record)
        let failed = DiskResponseCache.FileProtection.complete.apply(toItemAtPath: "/c") { _, _ in throw AttributesRejected() }
        // THEN inherit sets nothing and may write; complete is set and may write; a failure may not write
        #expect(inherit && complete && !failed)
        #expect(calls.count == 1)
        #expect(calls.first?.hasPrefix("/b: ") == true)
    }

    @Test func anEntryWhoseClassCannotBeSetIsNotWrittenAndTheEntryItReplacesIsRemoved() async throws {
        // GIVEN an entry stored by a cache, and a cache on the same folder that cannot set the class it asks for
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = CacheFixture.key("profile")
        let cache = DiskResponseCache(directory: folder)
        await cache.store(CacheFixture.response(for: key), for: key)
        let failing = DiskResponseCache(directory: folder, maximumBytes: cache.maximumBytes, fileProtection: .complete) { _ in false }
        // WHEN it stores a new response under the key
        await failing.store(CacheFixture.response(for: key, seed: 1), for: key)
        // THEN nothing is written unprotected: the key misses, and no entry file is left
        #expect(await failing.cachedResponse(for: key) == nil)
        #expect(await cache.count == 0)
        let leftovers = FileManager.default.enumerator(atPath: folder.appendingPathComponent("public").path)?.allObjects ?? []
        #expect(leftovers.isEmpty)
    }

    @Test func aFileItsClassClosesWhileTheDeviceIsLockedStaysAndAMissingOrDamagedOneGoes() throws {
        // GIVEN / WHEN the errors of opening an entry file that a read could not use
        // THEN a refusal (EPERM: the class of a file while the device is locked; EACCES) keeps the file,
        // anything else means the file is gone or not a file, and the cache drops it
        #expect(DiskCacheFolder.isRefusal(EPERM) && DiskCacheFolder.isRefusal(EACCES))
        #expect(![ENOENT, EISDIR, ENOTDIR, ELOOP, EIO].contains { DiskCacheFolder.isRefusal($0) })
        // AND a file that opens (a damaged one) is not taken for a refused one, nor one that is not there
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("entry")
        try Data("damaged".utf8).write(to: file)
        #expect(!DiskCacheFolder.isClosedByItsProtection(file.path))
        #expect(!DiskCacheFolder.isClosedByItsProtection(folder.appendingPathComponent("missing").path))
    }

    @Test func theProtectionIsTheAppsDefaultUnlessOneIsAskedFor() {
        // GIVEN / WHEN caches made with and without a protection option
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-tests-\(UUID().uuidString)")
        let plain = DiskResponseCache(directory: folder)
        let complete = DiskResponseCache(directory: folder, fileProtection: .complete)
        let named = DiskResponseCache.inCachesDirectory(named: "NetworkingTests", maximumBytes: 1_000, fileProtection: .completeUnlessOpen)
        // THEN the option is kept, inherit by default
        #expect(plain.fileProtection == .inherit)
        #expect(DiskResponseCache.inCachesDirectory(named: "NetworkingTests").fileProtection == .inherit)
        #expect(complete.fileProtection == .complete && complete.maximumBytes == 50 * 1_024 * 1_024)
        #expect(named.fileProtection == .completeUnlessOpen && named.maximumBytes == 1_000)
    }
}
