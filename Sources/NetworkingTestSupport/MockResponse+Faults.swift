import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Faults: what a slow, stalled or broken server does to a response, as OkHttp's MockWebServer has them
/// (`headersDelay`, `bodyDelay`, `throttleBody`, `SocketPolicy.NO_RESPONSE`, `STALL_SOCKET_AT_START`,
/// `DISCONNECT_DURING_RESPONSE_BODY`). Each returns a copy of the response; they compose:
///
/// ```swift
/// server.stub(.get, "/v1/feed", .json(feed).throttled(bytesPerChunk: 1_024, every: 0.02))
/// server.stub(.get, "/v1/report", .json(report).closingAfter(bytes: 100))
/// server.stub(.get, "/v1/slow", .json(feed).stallingBeforeHeaders())
/// ```
///
/// The pauses run on the mock's own clock, as ``delay`` does: a busy test run does not stretch them.
/// A response whose body was a plain ``body`` gets a `Content-Length` of the whole body (unless its headers
/// have one), as the server that breaks off or slows down had declared it.
extension MockResponse {
    /// This response, whose head never comes (`seconds` `.infinity`, the default), or comes after
    /// `seconds`: a server that accepted the connection and read the request, then hangs (OkHttp's
    /// `NO_RESPONSE`, or `headersDelay`), such as an overloaded backend behind a proxy.
    ///
    /// The request's timeout ends the call with `URLError(.timedOut)` when the head is later than it;
    /// else the call's deadline, or cancelling it. The same as ``delayed(by:)``, named for the fault.
    public func stallingBeforeHeaders(for seconds: TimeInterval = .infinity) -> MockResponse {
        delayed(by: seconds)
    }

    /// This response, with its head at once and its body `seconds` later: a server that sends the
    /// headers, then computes the body (OkHttp's `bodyDelay`). A pause longer than the request's timeout
    /// fails the call with `URLError(.timedOut)`, as URLSession's idle timeout does.
    public func delayingBody(by seconds: TimeInterval) -> MockResponse {
        var copy = self.withDeclaredLength()
        if copy.chunks.isEmpty { copy.chunks = [(copy.body, 0)] }
        copy.chunks[0].delay = max(copy.chunks[0].delay, 0) + seconds
        return copy
    }

    /// This response, whose body stops after its first `bytes` bytes, and nothing more comes, nor the
    /// end: a server (or a proxy, a NAT on the way) that stopped sending but keeps the connection open
    /// (OkHttp's `STALL_SOCKET_AT_START` once the head is sent, or a `throttleBody` that never resumes).
    ///
    /// The request's timeout is an idle timeout: no byte for that long fails the call with
    /// `URLError(.timedOut)`; else the call's deadline ends it, or cancelling it.
    public func stallingAfter(bytes: Int) -> MockResponse {
        var copy = self.withDeclaredLength()
        let (kept, rest) = copy.splitBody(after: bytes)
        copy.chunks = kept + [(rest, .infinity)]
        return copy
    }

    /// This response, whose connection is lost after the first `bytes` bytes of its body: a server that
    /// crashed or was restarted mid-body, a load balancer that dropped the connection (OkHttp's
    /// `DISCONNECT_DURING_RESPONSE_BODY`). The call fails with `URLError(.networkConnectionLost)`, as
    /// URLSession reports a connection closed before the declared length arrived.
    public func closingAfter(bytes: Int) -> MockResponse {
        var copy = self.withDeclaredLength()
        copy.chunks = copy.splitBody(after: bytes).kept
        copy.error = URLError(.networkConnectionLost)
        return copy
    }

    /// This response, whose body comes `bytesPerChunk` bytes at a time, `every` seconds, and whose
    /// request body is read at the same pace (URLSession's upload progress, see ``MockURLProtocol``): a slow
    /// or shared link, a server that rate-limits (OkHttp's `throttleBody`). Each chunk resets the request's
    /// idle timeout, so a throttled body slower in all than the timeout still arrives.
    ///
    /// `bytesPerChunk` below 1 counts as 1. The first chunk comes with the head (after its own delay, if
    /// it had one); each further one `every` seconds after the one before.
    public func throttled(bytesPerChunk: Int, every seconds: TimeInterval) -> MockResponse {
        var copy = self.withDeclaredLength()
        let size = max(bytesPerChunk, 1)
        let parts = copy.chunks.isEmpty ? [(data: copy.body, delay: TimeInterval(0))] : copy.chunks
        var chunks: [(data: Data, delay: TimeInterval)] = []
        for (index, part) in parts.enumerated() {
            var start = part.data.startIndex
            repeat {
                let end = part.data.index(start, offsetBy: size, limitedBy: part.data.endIndex) ?? part.data.endIndex
                let first = start == part.data.startIndex
                chunks.append((part.data[start..<end], first ? part.delay + (index > 0 ? seconds : 0) : seconds))
                start = end
            } while start < part.data.endIndex
        }
        copy.chunks = chunks
        copy.uploadThrottle = (size, seconds)
        return copy
    }

    /// This response with `Content-Length` set to its plain body's size, unless it streams chunks or
    /// already declares a length.
    private func withDeclaredLength() -> MockResponse {
        var copy = self
        guard chunks.isEmpty, !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame }) else {
            return copy
        }
        copy.headers["Content-Length"] = String(body.count)
        return copy
    }

    /// The body as chunks (the plain body as one) cut after `bytes` bytes: the chunks up to there, each
    /// with its delay, and the bytes after.
    private func splitBody(after bytes: Int) -> (kept: [(data: Data, delay: TimeInterval)], rest: Data) {
        var left = max(bytes, 0)
        var kept: [(data: Data, delay: TimeInterval)] = []
        var rest = Data()
        for part in chunks.isEmpty ? [(data: body, delay: TimeInterval(0))] : chunks {
            if left >= part.data.count {
                kept.append(part)
                left -= part.data.count
            } else {
                if left > 0 { kept.append((part.data.prefix(left), part.delay)) }
                rest.append(part.data.dropFirst(left))
                left = 0
            }
        }
        return (kept, rest)
    }
}
