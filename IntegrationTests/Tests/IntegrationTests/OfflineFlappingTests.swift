import Foundation
import Networking
import NetworkingTestSupport
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The offline proof over real TCP (Docs/Offline.md): 1,000 calls running while the network goes down
/// and up 1,000 times, a `ManualConnectivity` saying so.
///
/// Every attempt is held on "the wire" (an adapter), first come first served, as a request in flight:
/// each time the network goes down, the connectivity goes offline first, then the first two attempts held
/// are delivered to the test server and the next two refused (sent to a loopback port that is bound but
/// never listens, so the kernel refuses the connection: `URLError.cannotConnectToHost`, as a dead network
/// does); the others stay held. The connectivity goes online again
/// only once every unfinished call waits for it or is held, so every refused attempt failed while it said
/// offline: none may cost its call an attempt. The provider allows one attempt a call (`maximumAttempts: 1`):
/// a refused attempt counted would end its call with `transportFailed`.
@Suite("Offline over TCP", .timeLimit(.minutes(1)))
struct OfflineFlappingTests {
    @Test("1,000 calls, 1,000 toggles: a value or a typed error each, no refused attempt counted, stale-if-error answers offline (RFC 5861 §4)")
    func flapping() async throws {
        try await withServer { server in
            let calls = 1_000
            let toggles = 1_000
            let started = DispatchTime.now()
            // GIVEN a provider whose attempts the wire holds, and one with a cached document that is now stale
            let connectivity = ManualConnectivity()
            let wire = try Wire()
            let monitor = WaitCounter()
            let provider = NetworkProvider(
                connectivity: connectivity, configuration: .ephemeral, interceptor: Interceptor(adapters: [ClosureAdapter(wire.route)]),
                maximumAttempts: 1, deadline: 20, monitors: [monitor])
            let clock = ManualClock(start: Date())
            let cached = NetworkProvider(connectivity: connectivity, configuration: .ephemeral, cache: MemoryResponseCache(), now: clock.now)
            let document = OfflineCall(baseURL: server.baseURL, path: "/offline/doc", cachePolicy: .staleIfError(upTo: 3_600))
            #expect(try await cached.response(document).report.cache == .miss)
            clock.advance(by: 90)   // max-age=60: stale, within the 3,600 s stale-if-error allowance

            // WHEN 1,000 calls run while the network goes down and up 1,000 times
            let running = Running(calls)
            var staleAnswers: [CallReport] = []
            var unfinishedAtLastToggle = 0
            let outcomes = await withTaskGroup(of: Result<CallReport, any Error>.self) { group in
                for n in 0..<calls {
                    group.addTask {
                        defer { running.finish() }
                        do {
                            return .success(try await provider.response(OfflineCall(baseURL: server.baseURL, path: "/offline/ping/\(n)")).report)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                for toggle in 1...toggles {
                    if toggle % 2 == 1 {
                        connectivity.set(online: false)
                        wire.release(delivering: 2, refusing: 2)   // attempts in flight: two arrive, two are refused
                        // every unfinished call waits, or is held: each refused attempt has failed, offline
                        while connectivity.waitingCount + wire.heldCount < running.count { try? await Task.sleep(nanoseconds: 100_000) }
                        // a cached endpoint answers now, offline (it would wait forever if it waited)
                        if let answer = try? await cached.response(document) { staleAnswers.append(answer.report) }
                    } else {
                        connectivity.set(online: true)
                        for _ in 0..<4 { await Task.yield() }
                    }
                }
                unfinishedAtLastToggle = running.count
                wire.open()   // online for good: the attempts held and all later ones go through
                return await group.reduce(into: []) { $0.append($1) }
            }

            // THEN every call ended with a value or a typed error, each value after one counted attempt: the
            // server's answer. The refused attempts cost none.
            let reports = outcomes.compactMap { try? $0.get() }
            let errors = outcomes.compactMap { outcome -> (any Error)? in
                if case .failure(let error) = outcome { return error }
                return nil
            }
            #expect(outcomes.count == calls)
            for error in errors { #expect(isTyped(error), "an untyped end: \(error)") }
            #expect(reports.allSatisfy { $0.statusCodes == [200] })
            let control = NetworkProvider(configuration: .ephemeral)
            let stats = try await control.request(OfflineCall(baseURL: server.baseURL, path: "/offline/stats"), as: OfflineStats.self)
            // the server saw only delivered attempts, and answered each value's one (a delivered attempt may be
            // answered after its call's deadline passed, on a loaded machine)
            #expect(stats.pings <= wire.delivered)
            #expect(stats.pings >= reports.count)
            #expect(wire.refused > 0)   // attempts did fail while the network was down, and none of them was counted
            // AND the stale document answered every time the network was down, from the cache, with no attempt
            #expect(staleAnswers.count == toggles / 2)
            #expect(staleAnswers.allSatisfy { $0.cache == .staleIfError && $0.statusCodes.isEmpty })
            #expect(stats.docs == 1)

            let waited = reports.reduce(0) { $0 + $1.connectivityWait }
            let counted = reports.reduce(0) { $0 + $1.statusCodes.filter { $0 != 200 }.count } + errors.count { !isTyped($0) }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            print(
                "Offline over TCP: \(calls) calls, \(toggles) toggles (\(unfinishedAtLastToggle) calls unfinished at the last): "
                    + "\(reports.count) values, \(errors.count) errors (\(errors.count { ($0 as? NetworkError) == .offline }) offline); "
                    + "\(wire.delivered) attempts delivered, \(wire.refused) refused while down (\(counted) counted); \(monitor.waits) connectivity waits, "
                    + "connectivityWait \(String(format: "%.2f", waited)) s in total "
                    + "(max \(String(format: "%.3f", reports.map(\.connectivityWait).max() ?? 0)) s); "
                    + "\(staleAnswers.count) stale-if-error answers while down; \(String(format: "%.1f", seconds)) s")
        }
    }
}

/// Whether `error` is one a call offline may end with: its deadline passed, or it would not wait.
private func isTyped(_ error: any Error) -> Bool {
    switch error as? NetworkError {
    case .deadlineExceeded?, .offline?: true
    default: false
    }
}

/// A call of the offline tests.
private struct OfflineCall: Endpoint {
    var baseURL: URL
    var path: String
    var cachePolicy: CachePolicy?
}

/// `/offline/stats`'s body.
private struct OfflineStats: Decodable {
    let pings: Int
    let docs: Int
}

/// How many calls have not ended yet.
private final class Running: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Int

    init(_ value: Int) { self.value = value }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func finish() {
        lock.lock()
        value -= 1
        lock.unlock()
    }
}

/// Counts the connectivity waits the provider tells its monitors about.
private final class WaitCounter: EventMonitor, @unchecked Sendable {
    // @unchecked: `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    var waits: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func connectivityWaitDidStart(context: RequestContext) {
        lock.lock()
        count += 1
        lock.unlock()
    }
}

/// The test's wire: an attempt is held until ``release(delivering:refusing:)`` lets it go where it was
/// addressed or to a loopback port that is bound but never listens, which refuses every connection;
/// after ``open()``, every attempt goes through at once.
private final class Wire: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`; `socket` is only closed in deinit.
    private let lock = NSLock()
    private var held: [CheckedContinuation<Bool, Never>] = []
    private var isOpen = false
    private var counts = (delivered: 0, refused: 0)
    private let socket: Int32
    private let deadPort: Int

    init() throws {
        (socket, deadPort) = try Self.boundSocket()
    }

    deinit { close(socket) }

    /// How many attempts are held now.
    var heldCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return held.count
    }

    /// How many attempts went through, and how many were refused.
    var delivered: Int { read().delivered }
    var refused: Int { read().refused }

    private func read() -> (delivered: Int, refused: Int) {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }

    /// Lets the first `delivering` held attempts go where they were addressed and the next `refusing` to
    /// the refusing port; the others stay held.
    func release(delivering: Int, refusing: Int) {
        lock.lock()
        let delivered = held.prefix(delivering)
        let refused = held.dropFirst(delivered.count).prefix(refusing)
        held.removeFirst(delivered.count + refused.count)
        counts.delivered += delivered.count
        counts.refused += refused.count
        lock.unlock()
        for attempt in delivered { attempt.resume(returning: false) }
        for attempt in refused { attempt.resume(returning: true) }
    }

    /// Stops holding attempts, and lets the held ones through.
    func open() {
        lock.lock()
        isOpen = true
        lock.unlock()
        release(delivering: Int.max, refusing: 0)
    }

    /// The adapter: holds the attempt until it is released, then routes it.
    @Sendable func route(_ request: URLRequest, _ context: RequestContext) async throws -> URLRequest {
        let refused = await withCheckedContinuation { hold($0) }
        guard refused, let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return request }
        components.port = deadPort
        var routed = request
        routed.url = components.url
        return routed
    }

    private func hold(_ attempt: CheckedContinuation<Bool, Never>) {
        lock.lock()
        guard isOpen else {
            held.append(attempt)
            lock.unlock()
            return
        }
        counts.delivered += 1
        lock.unlock()
        attempt.resume(returning: false)
    }

    struct SocketError: Error {}

    /// A TCP socket bound to a free loopback port, not listening: connections to it are refused.
    private static func boundSocket() throws -> (Int32, Int) {
        #if canImport(Glibc)
            let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SocketError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            close(descriptor)
            throw SocketError()
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
