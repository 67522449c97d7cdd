import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The outbox crash test's server, on 127.0.0.1 with an ephemeral port: one route that applies numbered
/// mutations once per `Idempotency-Key` (see ``IdempotencyLedger``) and answers slowly enough that a kill
/// lands while a request is in flight.
///
/// `POST /outbox/apply/{n}` with the JSON body `{"n": n}` and `Idempotency-Key: <key>` → `201 {"n": n, "key": key}`
/// after the response delay (every `slowEvery`-th mutation applied: after `slowDelay`, longer than a new process
/// takes to start and send it again, so that a repeat arrives while the first is in flight); a replay adds
/// `Idempotent-Replayed: true`; a repeat in flight → 409; no key → 400.
public struct OutboxServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// Every request and what was applied.
    public let ledger: IdempotencyLedger
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// The base URL, `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts the server; each first answer waits `responseDelay` seconds after the mutation is applied, every
    /// `slowEvery`-th (0: none) `slowDelay` seconds.
    public static func start(responseDelay: TimeInterval, slowEvery: Int = 0, slowDelay: TimeInterval = 0.5) async throws -> OutboxServer {
        let ledger = IdempotencyLedger()
        let router = Router()
        let (fast, slow) = (UInt64(max(0, responseDelay) * 1e9), UInt64(max(0, slowDelay) * 1e9))
        router.post("/outbox/apply/:n") { request, context -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 16)
            let number = Int(context.parameters.get("n") ?? "") ?? -1
            let key = HTTPField.Name("Idempotency-Key").flatMap { request.headers[$0] }
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            switch ledger.receive(number: number, key: key, bodyNumber: object?["n"] as? Int) {
            case .reject:
                return Response(status: .badRequest)
            case .conflict:
                return Response(status: .conflict)
            case .replay(let answer):
                var response = created(answer)
                if let name = HTTPField.Name("Idempotent-Replayed") { response.headers[name] = "true" }
                return response
            case .apply(let ordinal):
                // The mutation is applied; its answer takes a while. A client killed now never hears it, and the
                // answer is stored all the same (a cancelled sleep ends early: the answer must not be lost).
                do { try await Task.sleep(nanoseconds: slowEvery > 0 && ordinal % slowEvery == 0 ? slow : fast) } catch {}
                let answer = (try? JSONSerialization.data(withJSONObject: ["n": number, "key": key ?? ""], options: [.sortedKeys])) ?? Data()
                ledger.finish(key: key ?? "", answer: answer)
                return created(answer)
            }
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "OutboxServer")
        logger.logLevel = .critical   // connections the test kills mid-request are expected
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "outbox-crash"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        for await port in ports where port > 0 {
            return OutboxServer(port: port, ledger: ledger, group: group, task: task)
        }
        task.cancel()
        throw TestServer.ServerError.didNotStart
    }

    /// Stops the server gracefully.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    private static func created(_ answer: Data) -> Response {
        Response(status: .created, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
    }
}
