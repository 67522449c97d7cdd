import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One download call's partial file, and what asking only for the rest of it takes, across the call's
/// attempts (and, through a ``ResumableDownload``, across calls).
///
/// The rules, in the order a resumed attempt meets them:
/// - Only a `GET` whose endpoint accepts 206 and sets no `Range`/`If-Range` of its own resumes.
/// - An attempt that failed after bytes arrived keeps them only when the body came whole-file (200), not
///   content-encoded, with a strong validator: an `ETag` that is not weak, else (no `ETag` at all) a
///   `Last-Modified` at least one second before the response's `Date` (RFC 9110 §8.8.2.2). A weak tag
///   never resumes, even with a date (§13.1.5).
/// - The next attempt sends `Range: bytes=N-` and `If-Range` with exactly that validator, on every hop.
/// - A 206 appends only when it carries the kept bytes' validator (the same strong `ETag`, or the same
///   `Last-Modified` when that was the validator: a server that ignores `If-Range` must not splice two
///   versions, RFC 9110 §13.1.5, §8.8.3.2), is not content-encoded, and its `Content-Range` starts at N
///   with a complete length that agrees with the known one (`*` only when the length is known: a 206 that
///   cannot be shown to reach the body's end never completes it, RFC 9110 §14.4) and a last byte within it.
/// - A 200 starts the file again from its first byte; a 416, or a 206 that does not fit, is refused: the
///   partial is dropped and the next attempt starts from zero without asking the retriers. So is a 206 to
///   a `GET` that asked for no range (a proxy's), unless its `Content-Range` is the whole body (`bytes 0-(n-1)/n`).
/// - An appended 206 that ends before the known end (a server may send less than asked, RFC 9110 §14.4),
///   or whose body is shorter than its `Content-Range`, ends its attempt as a connection lost there: the
///   bytes are kept and the next attempt asks for the rest, without asking the retriers. A body longer than
///   its `Content-Range` is refused. A call never succeeds with a file short of the known length.
final class DownloadResumption: @unchecked Sendable {
    // @unchecked: the `var`s are guarded by `lock`. The call's task prepares each hop; the session
    // delegate's queue judges responses and keeps bytes; they take turns, never at once.

    /// Where an accepted body starts in the file.
    enum Start: Equatable {
        /// At the first byte: the file is emptied.
        case fresh
        /// After this many bytes, which the file keeps.
        case append(Int64)
    }

    /// The partial file, in the destination's folder.
    let file: URL
    private let url: URL?
    private let canResume: Bool
    /// Whether the endpoint accepts a 206 (else one fails the call as any status it does not accept).
    private let accepts206: Bool
    private let deadline: TimeInterval?
    private let maximumResponseSize: Int?
    /// Whether this call claimed ``file`` from a ``ResumableDownload`` (see ``release()``).
    private let claimed: Bool

    private let lock = NSLock()
    /// The bytes at the start of ``file`` that are the body's first bytes.
    private var length: Int64 = 0
    /// The `If-Range` value: the strong validator of the response those bytes came from.
    private var validator: String?
    /// The body's whole length, when declared.
    private var total: Int64?
    /// Where the range the hop under way asked for starts, if it asked.
    private var asked: Int64?
    /// Whether the hop under way is a `GET` without any `Range`: its 206 can only be the whole body.
    private var unranged = false
    /// Where the file ends when the 206 being appended ends (its `Content-Range`'s last byte + 1).
    private var end: Int64?
    /// Whether the attempt that just failed had its range refused, or stopped short of the end with its
    /// bytes kept: the next attempt then follows without asking the retriers.
    private var refused = false

    private init(endpoint: some Endpoint, file: URL, resuming value: ResumableDownload?) {
        self.file = file
        self.url = try? endpoint.url()
        let headers = endpoint.headers.keys.map { $0.lowercased() }
        self.accepts206 = endpoint.acceptableStatusCodes.contains(206)
        self.canResume =
            url != nil && endpoint.method == .get && accepts206
            && !headers.contains("range") && !headers.contains("if-range")
        self.deadline = endpoint.deadline
        self.maximumResponseSize = endpoint.maximumResponseSize
        self.claimed = value != nil
        if let value {
            length = value.bytesReceived
            validator = value.validator
            total = value.totalBytes
        }
    }

    /// The resumption of a download of `endpoint` into `folder`: continuing `value` when it is this
    /// endpoint's, its partial file can be found (in `folder` or where `value` says) with at least its
    /// bytes, and no other call is continuing it; else a new partial file. A continued file is moved into
    /// `folder` when it is elsewhere and touched, so that the stale-file sweep spares it.
    static func make(for endpoint: some Endpoint, in folder: URL, resuming value: ResumableDownload?) async -> DownloadResumption {
        if let value, let file = await claimPartialFile(of: value, for: endpoint, in: folder) {
            return DownloadResumption(endpoint: endpoint, file: file, resuming: value)
        }
        let file = folder.appendingPathComponent(".networking-\(UUID().uuidString).download")
        return DownloadResumption(endpoint: endpoint, file: file, resuming: nil)
    }

    /// `request` asking only for the rest of the body, when there is a partial file to continue;
    /// called for every hop of every attempt (a redirect to a CDN gets the range too).
    func prepared(_ request: URLRequest) -> URLRequest {
        lock.lock()
        defer { lock.unlock() }
        asked = nil
        unranged = request.httpMethod ?? "GET" == "GET" && request.value(forHTTPHeaderField: "Range") == nil
        guard canResume, length > 0, let validator, request.httpMethod ?? "GET" == "GET", request.value(forHTTPHeaderField: "Range") == nil
        else { return request }
        var request = request
        request.setValue("bytes=\(length)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        asked = length
        return request
    }

    /// The error that ends the attempt when `response` refuses the range it asked for (a 416, or a 206
    /// that is not the rest of this body), or is a 206 of part of the body to a `GET` that asked for no
    /// range; the partial is then dropped and the next attempt starts from the first byte
    /// (``restartsAfterRefusal()``). `nil` for any other response.
    func refusal(of response: HTTPURLResponse) -> NetworkError? {
        lock.lock()
        defer { lock.unlock() }
        guard let offset = asked else {
            guard unranged, accepts206, response.statusCode == 206, Self.wholeLength(of: response) == nil else { return nil }
            refused = true   // a part where the whole was asked for (a proxy's answer): never the file
            forget()
            return .transportFailed(URLError(.badServerResponse))
        }
        let error: NetworkError
        switch response.statusCode {
        case 416:
            error = .invalidStatusCode(416)
        case 206 where !Self.continues(response, at: offset, total: total, validator: validator):
            error = .transportFailed(URLError(.badServerResponse))
        default:
            return nil
        }
        refused = true
        forget()
        return error
    }

    /// Where the accepted body of `response` starts in the file (call after ``refusal(of:)``): after the
    /// partial bytes for the 206 that continues them, else at the first byte, noting the response's
    /// strong validator for a later resume.
    func start(with response: HTTPURLResponse) -> Start {
        lock.lock()
        defer { lock.unlock() }
        defer { (asked, unranged) = (nil, false) }
        end = nil
        if let offset = asked, response.statusCode == 206 {
            // ``refusal(of:)`` let it through: its Content-Range parses, starts at `offset` and fits `total`
            // (which it sets when unknown: a `*` is refused then).
            if let range = response.value(forHTTPHeaderField: "Content-Range").flatMap(Self.contentRange) {
                end = range.last + 1
                total = total ?? range.complete
            }
            return .append(offset)
        }
        forget()
        // An unasked 206 that ``refusal(of:)`` let through is the whole body, `bytes 0-(n-1)/n`: it must hold n bytes.
        let whole = unranged && accepts206 && response.statusCode == 206 ? Self.wholeLength(of: response) : nil
        if let whole { end = whole }
        guard canResume, response.statusCode == 200 || whole != nil, let strong = Self.strongValidator(of: response) else { return .fresh }
        validator = strong
        total = whole ?? (response.expectedContentLength >= 0 ? response.expectedContentLength : nil)
        return .fresh
    }

    /// The error that ends an attempt whose answer arrived without a transport error, when it leaves the
    /// file unfinished: an appended 206 (or an unasked one of the whole body) whose body ended before its
    /// `Content-Range` end or the known length (the next attempt asks for the rest, unasked; RFC 9110
    /// §14.4), or ran past its end (refused: the next attempt starts from the first byte). `nil` when the
    /// file is whole, or no 206 was written.
    func shortfall(written: Int64) -> NetworkError? {
        lock.lock()
        defer { lock.unlock() }
        guard let end else { return nil }
        self.end = nil
        refused = true
        if written > end {
            forget()   // more bytes than the range holds: not the body's, whatever they are
            return .transportFailed(URLError(.badServerResponse))
        }
        if written < end || written < total ?? 0 {
            return .transportFailed(URLError(.networkConnectionLost))   // ``keep(written:)`` keeps them
        }
        refused = false
        return nil
    }

    /// An attempt that wrote `written` bytes to the file failed: whether they are kept for the next
    /// attempt (the body had a strong validator), else forgotten (the caller removes the file).
    func keep(written: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        end = nil
        guard validator != nil, written > 0 else {
            forget()
            return false
        }
        length = written
        return true
    }

    /// The partial bytes are no use any more (the file was removed, or will be rewritten).
    func reset() {
        lock.lock()
        defer { lock.unlock() }
        forget()
    }

    /// Whether the attempt that just failed had its range refused, so that the next one starts from
    /// the first byte without asking the retriers; answers once.
    func restartsAfterRefusal() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { refused = false }
        return refused
    }

    /// What continues this download in a later call, when the file holds bytes that can be resumed.
    func resumable() -> ResumableDownload? {
        lock.lock()
        defer { lock.unlock() }
        guard canResume, let url, let validator, length > 0 else { return nil }
        return ResumableDownload(
            url: url, validator: validator, partialFile: file, bytesReceived: length, totalBytes: total, deadline: deadline,
            maximumResponseSize: maximumResponseSize)
    }

    /// Removes the partial file (nothing to resume), off the cooperative pool.
    func removeFile() async {
        reset()
        let file = self.file
        _ = try? await BlockingFileWork.run { _ in try? FileManager.default.removeItem(at: file) }   // may never have existed
    }

    /// Lets another call continue the file; call when this call ends.
    func release() {
        if claimed { Self.unclaim(file.lastPathComponent) }
    }

    private func forget() {
        length = 0
        validator = nil
        total = nil
        end = nil
    }

    // MARK: Rules

    /// The response's validator when it is strong and the body is not content-encoded, else `nil`.
    static func strongValidator(of response: HTTPURLResponse) -> String? {
        guard isIdentity(response) else { return nil }   // a range of a compressed body cannot follow its decoded bytes
        if let tag = response.value(forHTTPHeaderField: "ETag") {
            return isStrongEntityTag(tag) ? tag : nil   // a weak tag: never a date instead (RFC 9110 §13.1.5)
        }
        guard let modified = response.value(forHTTPHeaderField: "Last-Modified"), let date = response.value(forHTTPHeaderField: "Date"),
            let lastModified = HTTPDate.parse(modified), let served = HTTPDate.parse(date), served.timeIntervalSince(lastModified) >= 1
        else { return nil }
        return modified
    }

    /// Whether `tag` is a strong entity tag: `"…"` of visible ASCII without a quote inside (not `W/"…"`).
    static func isStrongEntityTag(_ tag: String) -> Bool {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) }
    }

    /// Whether `validator` could have come from ``strongValidator(of:)``: what a decoded value may carry.
    static func isValidator(_ validator: String) -> Bool {
        isStrongEntityTag(validator) || (WireValidation.isFieldValue(validator) && HTTPDate.parse(validator) != nil)
    }

    /// Whether the 206 `response` continues the body from `offset`: not content-encoded, carrying the kept
    /// bytes' `validator` (``carries(_:in:)``), with a `Content-Range` that starts there, whose complete
    /// length is the `total` known (`*` only when one is known: with neither, nothing shows where the body
    /// ends, RFC 9110 §14.4), and whose last byte is within it. It may end before the end (RFC 9110
    /// §14.4): ``shortfall(written:)`` then asks for the rest.
    static func continues(_ response: HTTPURLResponse, at offset: Int64, total: Int64?, validator: String?) -> Bool {
        guard isIdentity(response), let validator, carries(validator, in: response), let value = response.value(forHTTPHeaderField: "Content-Range"),
            let range = contentRange(value), range.first == offset, range.complete != nil || total != nil
        else { return false }
        if let complete = range.complete, let total, total != complete { return false }
        if let total, range.last >= total { return false }
        return response.expectedContentLength < 0 || response.expectedContentLength == range.last - range.first + 1
    }

    /// Whether `response` carries `validator`, the kept bytes' strong one: an `ETag` that matches it by
    /// the strong comparison (both strong, the same characters; RFC 9110 §8.8.3.2), or, when the kept
    /// bytes' validator was their `Last-Modified`, the same date. A 206 without it may be another version's
    /// bytes (a server that ignores `If-Range`), and RFC 9110 §15.3.7 has a 206 carry the `ETag` a 200 would.
    static func carries(_ validator: String, in response: HTTPURLResponse) -> Bool {
        if isStrongEntityTag(validator) {
            guard let tag = response.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces) else { return false }
            return isStrongEntityTag(tag) && tag == validator
        }
        guard let kept = HTTPDate.parse(validator), let modified = response.value(forHTTPHeaderField: "Last-Modified"),
            let date = HTTPDate.parse(modified)
        else { return false }
        return date == kept
    }

    /// `bytes first-last/complete` (`complete` is `nil` for `*`), or `nil` when `value` is not that.
    static func contentRange(_ value: String) -> (first: Int64, last: Int64, complete: Int64?)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let halves = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]), first <= last else { return nil }
        if halves[1] == "*" { return (first, last, nil) }
        guard let complete = number(halves[1]), last < complete else { return nil }
        return (first, last, complete)
    }

    /// The body's length n when `response`'s `Content-Range` is the whole of it, `bytes 0-(n-1)/n`, and its
    /// `Content-Length` (if any) agrees; else `nil`.
    static func wholeLength(of response: HTTPURLResponse) -> Int64? {
        guard let value = response.value(forHTTPHeaderField: "Content-Range"), let range = contentRange(value), range.first == 0,
            let complete = range.complete, range.last + 1 == complete,
            response.expectedContentLength < 0 || response.expectedContentLength == complete
        else { return nil }
        return complete
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }

    private static func isIdentity(_ response: HTTPURLResponse) -> Bool {
        guard let encoding = response.value(forHTTPHeaderField: "Content-Encoding") else { return true }
        let trimmed = encoding.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty || trimmed == "identity"
    }

    // MARK: Partial files handed back

    private static let claims = NSLock()
    /// The partial files (by name) that a call is continuing; guarded by `claims`.
    nonisolated(unsafe) private static var claimedNames: Set<String> = []

    /// `value`'s partial file, in `folder`, claimed for this call; `nil` when `value` cannot be continued here.
    /// The endpoint's URL must be the value's (``ResumableDownload/isDownload(of:)``: a presigned URL signed
    /// afresh is another URL). A value that cannot be continued has its partial file removed, unless another
    /// call is continuing it or its name is not a partial download's: nothing else could resume it.
    private static func claimPartialFile(of value: ResumableDownload, for endpoint: some Endpoint, in folder: URL) async -> URL? {
        let name = value.partialFile.lastPathComponent
        guard ResumableDownload.isPartialFileName(name) else { return nil }   // not ours: never touched
        guard claim(name) else { return nil }   // another call is continuing it: this one starts afresh
        let target = folder.appendingPathComponent(name)
        let usable = value.bytesReceived > 0 && isValidator(value.validator) && (try? endpoint.url()).map(value.isDownload(of:)) == true
        let found = try? await BlockingFileWork.run { _ -> Bool in
            let manager = FileManager.default
            let candidates = [target, value.partialFile]
            // Only a regular file is removed (never a folder or what a link points to); it may not exist.
            let removeAll = {
                for candidate in candidates
                where (try? manager.attributesOfItem(atPath: candidate.path))?[.type] as? FileAttributeType == .typeRegular {
                    try? manager.removeItem(at: candidate)   // nothing to report: the download starts afresh anyway
                }
            }
            guard usable else {
                removeAll()
                return false
            }
            for candidate in candidates {
                guard let attributes = try? manager.attributesOfItem(atPath: candidate.path),
                    attributes[.type] as? FileAttributeType == .typeRegular,
                    let size = (attributes[.size] as? NSNumber)?.int64Value, size >= value.bytesReceived
                else { continue }
                if candidate.standardizedFileURL != target.standardizedFileURL {
                    guard (try? manager.moveItem(at: candidate, to: target)) != nil else { return false }
                }
                try? manager.setAttributes([.modificationDate: Date()], ofItemAtPath: target.path)   // not stale: in use again
                return true
            }
            removeAll()   // too short to hold the bytes it says
            return false
        }
        guard found == true else {
            unclaim(name)
            return nil
        }
        return target
    }

    /// Whether the partial file called `name` was free, and is claimed by the caller from now on.
    private static func claim(_ name: String) -> Bool {
        claims.lock()
        defer { claims.unlock() }
        return claimedNames.insert(name).inserted
    }

    private static func unclaim(_ name: String) {
        claims.lock()
        defer { claims.unlock() }
        claimedNames.remove(name)
    }
}
