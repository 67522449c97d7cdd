import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response whose body is handed out as it arrives: chunks of bytes, ``lines`` or Server-Sent
/// ``events``. Made by ``NetworkProvider/stream(_:interceptor:)`` once the response's status was accepted.
///
/// Read it once, from one task. Cancelling that task, leaving a `for try await` loop over the stream, its
/// ``lines`` or its ``events`` before the body ended (a `break`, a `return`, a thrown error), or dropping
/// every copy of the stream cancels the transfer. An error while the body arrives (the connection drops, the reader falls more than the
/// endpoint's ``Endpoint/maximumResponseSize`` behind) is thrown to the reader as a ``NetworkError``
/// and never retried; a cancelled reader gets ``NetworkError/cancelled``.
///
/// ```swift
/// let stream = try await provider.stream(ChatAPI.reply(to: question))
/// for try await event in stream.events where event.event == "token" {
///     print(event.data, terminator: "")
/// }
/// ```
public struct ResponseStream: AsyncSequence, Sendable {
    /// A chunk of the body, as it arrived.
    public typealias Element = Data

    /// The response's status and headers, and the request as sent; its `data` is empty.
    public let response: Response
    let owner: Owner

    init(response: Response, channel: BodyChannel) {
        self.response = response
        self.owner = Owner(channel: channel)
    }

    /// Cancels the transfer, unless the body ended whole, when the last copy of what holds it is gone: the
    /// stream (and its iterators, which hold it too), or one iterator (a loop over it that ended early).
    final class Owner: Sendable {
        let channel: BodyChannel
        init(channel: BodyChannel) { self.channel = channel }
        deinit { if !channel.didEndNormally { channel.cancelTask() } }
    }

    /// The largest line or event the stream accepts, and how far its reader may fall behind, in bytes.
    var limit: Int { owner.channel.limit }

    /// Reads the chunks of the body as they arrive. When the last copy of an iterator is gone before the
    /// body ended (a `for try await` loop left early), the transfer is cancelled.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let owner: Owner
        /// This iterator's own: a loop that ends early drops its iterator while the stream may still be held.
        private let reading: Owner
        private var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator

        init(owner: Owner) {
            self.owner = owner
            self.reading = Owner(channel: owner.channel)
            self.chunks = owner.channel.chunks.makeAsyncIterator()
        }

        /// The next chunk, or `nil` when the body ended.
        public mutating func next() async throws -> Data? {
            let chunk: Data?
            do {
                chunk = try await chunks.next()
            } catch {
                throw NetworkProvider.normalize(error)
            }
            guard let chunk else {
                // A cancelled reader's stream ends early: say so, rather than pass a cut body for a whole one.
                if !owner.channel.didEndNormally { throw NetworkError.cancelled }
                return nil
            }
            owner.channel.taken(chunk.count)
            return chunk
        }
    }

    /// Returns an iterator over the body's chunks; read the stream only once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(owner: owner)
    }

    /// The body as lines of UTF-8 text, split at LF, CRLF or CR, without the line break. Invalid UTF-8
    /// becomes U+FFFD; a line longer than the limit throws ``NetworkError/responseTooLarge(limit:)``.
    public var lines: ResponseLines {
        ResponseLines(stream: self)
    }

    /// The body as Server-Sent Events (`text/event-stream`).
    public var events: ServerSentEvents {
        ServerSentEvents(lines: lines)
    }
}

/// The lines of a ``ResponseStream``; see ``ResponseStream/lines``.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line of the body, without its line break.
    public typealias Element = String
    let stream: ResponseStream

    /// Reads one line at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var chunks: ResponseStream.AsyncIterator
        private let limit: Int
        private var pending: [UInt8] = []
        private var index = 0
        private var line: [UInt8] = []
        private var afterCR = false
        private var ended = false

        init(stream: ResponseStream) {
            self.chunks = stream.makeAsyncIterator()
            self.limit = stream.limit
        }

        /// The next line, or `nil` at the end of the body (a last line without a break is returned).
        public mutating func next() async throws -> String? {
            while true {
                while index < pending.count {
                    let byte = pending[index]
                    index += 1
                    if afterCR {
                        afterCR = false
                        if byte == 0x0A { continue }   // the LF of a CRLF split or not across chunks
                    }
                    if byte == 0x0A || byte == 0x0D {
                        afterCR = byte == 0x0D
                        defer { line.removeAll(keepingCapacity: true) }
                        return String(decoding: line, as: UTF8.self)
                    }
                    line.append(byte)
                    if line.count > limit { throw NetworkError.responseTooLarge(limit: limit) }
                }
                guard !ended else { return nil }
                if let chunk = try await chunks.next() {
                    pending = Array(chunk)
                    index = 0
                } else {
                    ended = true
                    if !line.isEmpty {
                        defer { line.removeAll() }
                        return String(decoding: line, as: UTF8.self)
                    }
                    return nil
                }
            }
        }
    }

    /// Returns an iterator over the body's lines.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream)
    }
}
