import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One task of a ``SimulatedBackgroundSystem``: its request, and whether it runs or was cancelled.
final class SimulatedTask: @unchecked Sendable {
    // @unchecked: `isRunning` and `isCancelled` are guarded by the system's lock.
    let request: BackgroundSessionTaskRequest
    var isRunning = false
    var isCancelled = false

    init(request: BackgroundSessionTaskRequest) {
        self.request = request
    }

    /// Sends the request to the system's server, hop by hop, and delivers the task's events.
    func perform(in system: SimulatedBackgroundSystem) async {
        let label = request.label
        var current = request.request
        var body = Data()
        if case .upload(let file) = request.kind {
            guard let contents = FileManager.default.contents(atPath: file.path) else {
                return system.deliver(.completed(label: label, response: nil, error: URLError(.fileDoesNotExist)), ending: label)
            }
            body = contents
        }
        for _ in 0..<16 {
            var sent = current
            if sent.httpMethod ?? "GET" != "GET" { sent.httpBody = body }   // what the server records
            let recorded = RecordedRequest(sent)
            let answer: MockResponse
            do {
                answer = try await system.server.receive(recorded)(recorded)
                if answer.delay > 0 { try await Task.sleep(nanoseconds: UInt64(answer.delay * 1_000_000_000)) }
            } catch {
                return system.deliver(.completed(label: label, response: nil, error: URLError(.cannotConnectToHost)), ending: label)
            }
            if system.isCancelled(label) {
                return system.deliver(.completed(label: label, response: nil, error: URLError(.cancelled)), ending: label)
            }
            if let error = answer.error { return system.deliver(.completed(label: label, response: nil, error: error), ending: label) }
            var received = answer.body
            for chunk in answer.chunks { received.append(chunk.data) }
            let response = BackgroundSessionResponse(statusCode: answer.statusCode, headers: answer.headers, url: current.url)
            if case .upload = request.kind {
                system.deliver(.progress(label: label, completedBytes: Int64(body.count), totalBytes: Int64(body.count)), ending: nil)
            }
            if let next = redirect(after: response, from: current, in: system) {
                current = next
                continue
            }
            finish(with: response, body: received, in: system)
            return
        }
        system.deliver(.completed(label: label, response: nil, error: URLError(.httpTooManyRedirects)), ending: label)
    }

    /// The next hop after `response`, if it is a redirect the app (or the system, without the app) follows.
    private func redirect(after response: BackgroundSessionResponse, from current: URLRequest, in system: SimulatedBackgroundSystem) -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode), let location = response.header("Location"), let from = current.url,
            let target = URL(string: location, relativeTo: from)?.absoluteURL
        else { return nil }
        var proposed = current
        proposed.url = target
        if response.statusCode == 303 || (response.statusCode <= 302 && current.httpMethod == "POST") { proposed.httpMethod = "GET" }
        return system.redirect(request.label, response: response, proposed: proposed, current: current)
    }

    private func finish(with response: BackgroundSessionResponse, body: Data, in system: SimulatedBackgroundSystem) {
        let label = request.label
        switch request.kind {
        case .upload:
            if !body.isEmpty { system.deliver(.receivedData(label: label, body), ending: nil) }
        case .download:
            let total = response.header("Content-Length").flatMap { Int64($0) } ?? Int64(body.count)
            system.deliver(.progress(label: label, completedBytes: Int64(body.count), totalBytes: total), ending: nil)
            let file = system.folder.appendingPathComponent("CFNetworkDownload_\(UUID().uuidString).tmp")
            do {
                try body.write(to: file)
            } catch {
                return system.deliver(.completed(label: label, response: nil, error: URLError(.cannotWriteToFile)), ending: label)
            }
            system.deliver(.finishedDownloading(label: label, file: file), ending: nil)
        }
        system.deliver(.completed(label: label, response: response, error: nil), ending: label)
    }
}
