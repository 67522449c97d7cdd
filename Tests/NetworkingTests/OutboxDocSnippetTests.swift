// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the outbox snippets in Docs/Offline.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct CreateNote: Endpoint {
    let text: String
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/notes" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["text": text]) }
}

@Suite("Docs/Offline.md outbox snippets")
struct OutboxDocSnippetTests {
    @Test func outbox() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/notes", .status(201))
        let provider = server.makeProvider(connectivity: ManualConnectivity())
        let supportFolder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-doc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: supportFolder) }
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        // Once, at launch: the folder is the outbox's alone (a second Outbox on it throws .folderInUse).
        let outbox = try await Outbox(folder: supportFolder.appendingPathComponent("Outbox"), provider: provider)
        await outbox.startDelivering()

        // On disk when this returns, whatever happens next.
        let mutation = try await outbox.enqueue(CreateNote(text: "Hello"), group: "notes")

        for await outcome in outbox.outcomes {
            switch outcome {
            case .delivered(let mutation, let response): print("saved", mutation.id, response.statusCode)
            case .failed(let mutation, let error): print("refused", mutation.id, error)   // see outbox.failed: retry or discard
            case .discarded(let mutation, let reason): print("dropped", mutation.id, reason)
            case .damagedRecord(let record): print("unreadable record", record)
            case .outcomesDropped(let count): print(count, "outcomes unheard")   // match by idempotency key
            }
            await outbox.close()   // (the test's own line: ends the sequence)
        }
        #expect(printed == ["saved \(mutation.id) 201"])
        #expect(server.requests.first?.header("Idempotency-Key") == mutation.idempotencyKey)
    }

    @Test func configuration() throws {
        let configuration = OutboxConfiguration(
            maximumCount: 1_000,
            maximumBytes: 50 * 1_024 * 1_024,
            accountPolicy: .discard,
            isFailedForGood: { error in
                if case NetworkError.invalidStatusCode(409) = error { return true }   // our API's "conflict" is final
                return OutboxConfiguration.isFailedForGoodByDefault(error)
            })
        #expect(configuration.isFailedForGood(NetworkError.invalidStatusCode(409)))
        #expect(configuration.isFailedForGood(NetworkError.invalidStatusCode(422)))
        #expect(!configuration.isFailedForGood(NetworkError.invalidStatusCode(503)))
        #expect(!OutboxConfiguration.isFailedForGoodByDefault(NetworkError.invalidStatusCode(429)))
        #expect(configuration.maximumCount == 1_000)
    }
}
