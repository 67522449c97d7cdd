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
/// - A 206 whose `Content-Range` starts at N, runs to the end and agrees with the known length appends;
///   a 200 starts the file again from its first byte; a 416, or a 206 that does not fit, is refused: the
///   partial is dropped and the next attempt starts from zero without asking the retriers.
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
    /// Whether the attempt that just failed had its range refused.
    private var refused = false

    private init(endpoint: some Endpoint, file: URL, resuming value: ResumableDownload?) {
        self.file = file
        self.url = try? endpoint.url()
        let headers = endpoint.headers.keys.map { $0.lowercased() }
        self.canResume =
            url != nil && endpoint.method == .get && endpoint.acceptableStatusCodes.contains(206)
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
        guard canResume, length > 0, let validator, request.httpMethod ?? "GET" == "GET", request.value(forHTTPHeaderField: "Range") == nil
        else { return request }
        var request = request
        request.setValue("bytes=\(length)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        asked = length
        return request
    }

    /// The error that ends the attempt when `response` refuses the range it asked for (a 416, or a 206
    /// that is not the rest of this body); the partial is then dropped and the next attempt starts from
    /// the first byte (``restartsAfterRefusal()``). `nil` for any other response.
    func refusal(of response: HTTPURLResponse) -> NetworkError? {
        lock.lock()
        defer { lock.unlock() }
        guard let offset = asked else { return nil }
        let error: NetworkError
        switch response.statusCode {
        case 416:
            error = .invalidStatusCode(416)
        case 206 where !Self.continues(response, at: offset, total: total):
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
        defer { asked = nil }
        if let offset = asked, response.statusCode == 206 { return .append(offset) }
        forget()
        guard canResume, response.statusCode == 200, let strong = Self.strongValidator(of: response) else { return .fresh }
        validator = strong
        total = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        return .fresh
    }

    /// An attempt that wrote `written` bytes to the file failed: whether they are kept for the next
    /// attempt (the body had a strong validator), else forgotten (the caller removes the file).
    func keep(written: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
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

    /// Whether the 206 `response` is the rest of the body from `offset`: not content-encoded, with a
    /// `Content-Range` that starts there, runs to the end and agrees with the `total` known.
    static func continues(_ response: HTTPURLResponse, at offset: Int64, total: Int64?) -> Bool {
        guard isIdentity(response), let value = response.value(forHTTPHeaderField: "Content-Range"),
            let range = contentRange(value), range.first == offset
        else { return false }
        if let complete = range.complete, range.last != complete - 1 || (total != nil && total != complete) { return false }
        return response.expectedContentLength < 0 || response.expectedContentLength == range.last - range.first + 1
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
    private static func claimPartialFile(of value: ResumableDownload, for endpoint: some Endpoint, in folder: URL) async -> URL? {
        let name = value.partialFile.lastPathComponent
        guard ResumableDownload.isPartialFileName(name), value.bytesReceived > 0, isValidator(value.validator),
            (try? endpoint.url())?.absoluteString == value.url.absoluteString
        else { return nil }
        guard claim(name) else { return nil }   // another call is continuing it: this one starts afresh
        let target = folder.appendingPathComponent(name)
        let found = try? await BlockingFileWork.run { _ -> Bool in
            let manager = FileManager.default
            for candidate in [target, value.partialFile] {
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
