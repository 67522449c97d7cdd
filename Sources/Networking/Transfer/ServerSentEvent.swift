import Foundation

/// One Server-Sent Event, as the WHATWG HTML standard's event-stream parser reads it.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event type: the `event:` field, or `"message"` when the block had none.
    public var event: String
    /// The `data:` lines of the block, joined with `\n`.
    public var data: String
    /// The last event ID the stream set with `id:` (it carries over to later events), if any.
    public var id: String?
    /// The reconnection time in milliseconds the stream last set with a valid `retry:` field (it carries
    /// over to later events, as the last event ID does), if any.
    public var retry: Int?

    /// Creates an event.
    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}

/// The Server-Sent Events of a ``ResponseStream``; see ``ResponseStream/events``.
///
/// Comments (`:` lines) and unknown fields are skipped; a block with no `data:` dispatches nothing; an
/// unfinished block at the end of the body is dropped (as browsers do). An event whose data grows over the
/// stream's limit throws ``NetworkError/responseTooLarge(limit:)``.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event, dispatched at the blank line that ends its block.
    public typealias Element = ServerSentEvent
    let lines: ResponseLines

    /// Reads one event at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var lines: ResponseLines.AsyncIterator
        private let limit: Int
        private var parser = EventStreamParser()

        init(lines: ResponseLines) {
            self.lines = lines.makeAsyncIterator()
            self.limit = lines.stream.limit
        }

        /// The next event, or `nil` at the end of the body.
        public mutating func next() async throws -> ServerSentEvent? {
            while let line = try await lines.next() {
                if let event = parser.read(line) { return event }
                if parser.dataSize > limit { throw NetworkError.responseTooLarge(limit: limit) }
            }
            return nil
        }
    }

    /// Returns an iterator over the body's events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: lines)
    }
}

/// The event-stream interpretation of lines (WHATWG HTML, "Interpreting an event stream"), one line at a time.
struct EventStreamParser {
    private var type = ""
    private var data = ""
    private var hasData = false
    private var lastEventID: String?
    private var retry: Int?
    private var isFirstLine = true

    /// The size of the data gathered for the event being read, in UTF-8 bytes.
    var dataSize: Int { data.utf8.count }

    /// Reads one line (without its line break); returns an event when the line ends a block that had data.
    /// Fields are split on code points (the UTF-8 bytes `:` and space), never on grapheme clusters, so a
    /// combining mark after the colon stays in the value.
    mutating func read(_ rawLine: String) -> ServerSentEvent? {
        var line = Substring(rawLine).utf8[...]
        if isFirstLine {
            isFirstLine = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }   // a byte order mark
        }
        guard let first = line.first else { return dispatch() }
        if first == UInt8(ascii: ":") { return nil }   // a comment
        let field: Substring.UTF8View.SubSequence
        var value: Substring.UTF8View.SubSequence
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line
            value = line[line.endIndex...]
        }
        switch String(Substring(field)) {
        case "event":
            type = String(Substring(value))
        case "data":
            if hasData { data += "\n" }
            data += Substring(value)
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = String(Substring(value)) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int(String(Substring(value))) {
                retry = milliseconds
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            type = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(event: type.isEmpty ? "message" : type, data: data, id: lastEventID, retry: retry)
    }
}
