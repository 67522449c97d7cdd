import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The outbox's file uploads over TCP, where its features meet the transport's: an expired token answered
/// 401 before the body is read, a refresh, a 307 that sends the body again (RFC 9110 §15.4.8), and on Linux
/// both ways a file body goes (from memory up to 8 MiB, streamed chunked above: Docs/Limits.md).
@Suite("Outbox over TCP: file uploads through a refresh and a redirect")
struct OutboxTransferTests {
    @Test func queuedFileUploadsAreDeliveredOnceWholeInOrderThroughA401AndA307() async throws {
        try await withServer { server in
            // GIVEN a client whose token the server has just expired, and an outbox with two file uploads queued
            // in one group: 24 MiB, then 1 MiB
            let client = LiveClient(server)
            try await client.signIn(account: "alice")
            try await client.admin("expire")
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let files = [folder.appendingPathComponent("clip.mov"), folder.appendingPathComponent("photo.jpg")]
            try writeFile(files[0], megabytes: 24)
            try writeFile(files[1], megabytes: 1)
            let expected = try files.map { try TestServer.Checksum.of(file: $0) }
            let outbox = try await Outbox(folder: folder.appendingPathComponent("outbox"), provider: client.provider)
            var outcomes = outbox.outcomes.makeAsyncIterator()
            var mutations: [OutboxMutation] = []
            for file in files {
                mutations.append(try await outbox.enqueue(client.call("/upload/redirected", .put, body: .file(file, contentType: "video/mp4"))))
            }
            // and the app's own files are gone: the outbox sends the copies it made at enqueue
            for file in files { try FileManager.default.removeItem(at: file) }
            // WHEN it delivers
            await outbox.startDelivering()
            var delivered: [(mutation: OutboxMutation, response: Response)] = []
            while delivered.count < mutations.count, let outcome = await outcomes.next() {
                guard case .delivered(let mutation, let response) = outcome else {
                    Issue.record("not delivered: \(outcome)")
                    break
                }
                delivered.append((mutation, response))
            }
            await outbox.close()
            // THEN one refresh served both, each arrived whole at the redirect's target, in order, with its own key
            #expect(await server.state.refreshCount == 1)
            #expect(delivered.map(\.mutation.id) == mutations.map(\.id))
            for (index, (mutation, response)) in delivered.enumerated() {
                let upload = try JSONDecoder().decode(ServerUpload.self, from: response.data)
                #expect(upload.size == expected[index].size)
                #expect(upload.checksum == expected[index].hex)
                #expect(upload.idempotencyKey == mutation.idempotencyKey)
            }
            #expect(Set(delivered.map(\.mutation.idempotencyKey)).count == 2)
            // and once closed, the outbox keeps no record and no copied body of a delivered mutation
            let paths = FileManager.default.enumerator(atPath: folder.appendingPathComponent("outbox").path)?.compactMap { $0 as? String } ?? []
            #expect(paths.contains("records") && paths.contains("bodies"))
            #expect(paths.filter { $0.hasPrefix("records/") || $0.hasPrefix("bodies/") }.isEmpty)
        }
    }
}
