import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an interrupted download needs to continue where it stopped, after a relaunch too: the URL, the
/// validator the server gave the body (sent back as `If-Range`), and the partial file with its length.
///
/// A call that opts in to resuming (``NetworkProvider/download(_:to:resuming:interceptor:progress:)`` or
/// ``NetworkProvider/download(resuming:to:interceptor:progress:)``) throws ``DownloadInterrupted`` carrying
/// one when it fails or is cancelled after part of the body was written. Keep it (it is `Codable`), and
/// pass it back to ask the server only for the rest:
///
/// ```swift
/// do {
///     _ = try await provider.download(MapPack(), to: destination, resuming: saved)
///     saved = nil
/// } catch let interrupted as DownloadInterrupted {
///     saved = interrupted.resumable          // store it; resume later, even after a relaunch
/// }
/// ```
///
/// Its encoded form keeps none of the query values a default ``Redactor`` hides (such as `token`, and
/// the signatures and credentials of presigned URLs: `X-Amz-Signature`, `sig`, `X-Goog-Signature`, ...)
/// and no user or password: each is replaced by its SHA-256 digest (`sha256-<hex>`). A secret in a path
/// segment, or in a query item of a name the default redactor does not list, stays as it is. A value
/// decoded from such a form is continued by passing the same endpoint again to
/// ``NetworkProvider/download(_:to:resuming:interceptor:progress:)``; a value without secrets in its URL
/// also continues on its own with ``NetworkProvider/download(resuming:to:interceptor:progress:)``. The
/// endpoint's URL must be the value's exactly: a presigned URL signed afresh (a new signature, date or
/// expiry) is another URL, and its download starts from the first byte.
///
/// The partial file lies beside the destination, named `.networking-*.download`. It is moved into place
/// when the download completes, and removed by ``discard()``; one left alone for more than a day is
/// removed when a later download starts in its folder (the value then resumes from the first byte).
public struct ResumableDownload: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The URL the download's endpoint built (before interceptors adapted it). In a value decoded from its
    /// encoded form, the values of secret query items, and any user and password, are their SHA-256
    /// digests (`sha256-<hex>`).
    public let url: URL
    /// The validator the body was served with, sent back as `If-Range`: a strong entity tag (`"v42"`),
    /// or a `Last-Modified` date when the server gave no entity tag and the date was strong.
    public let validator: String
    /// The partial file: the first ``bytesReceived`` bytes of the body.
    public let partialFile: URL
    /// How many bytes of the body the partial file holds.
    public let bytesReceived: Int64
    /// The body's whole length, when the server declared it.
    public let totalBytes: Int64?
    /// The endpoint's ``Endpoint/deadline``, for ``NetworkProvider/download(resuming:to:interceptor:progress:)``.
    public let deadline: TimeInterval?
    /// The endpoint's ``Endpoint/maximumResponseSize``, for
    /// ``NetworkProvider/download(resuming:to:interceptor:progress:)``.
    public let maximumResponseSize: Int?
    /// Whether ``url`` lost secret values when the value was encoded: it then cannot be sent as it is.
    let urlWithoutSecrets: Bool

    private enum CodingKeys: String, CodingKey {
        case url, validator, partialFile, bytesReceived, totalBytes, deadline, maximumResponseSize, urlWithoutSecrets
    }

    init(
        url: URL, validator: String, partialFile: URL, bytesReceived: Int64, totalBytes: Int64?, deadline: TimeInterval?,
        maximumResponseSize: Int?
    ) {
        self.url = url
        self.validator = validator
        self.partialFile = partialFile
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.deadline = deadline
        self.maximumResponseSize = maximumResponseSize
        self.urlWithoutSecrets = false
    }

    /// Decodes a value, from the form ``encode(to:)`` writes or the one earlier versions wrote (whose URL
    /// kept its secret values: such a value still continues on its own).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(URL.self, forKey: .url)
        validator = try container.decode(String.self, forKey: .validator)
        partialFile = try container.decode(URL.self, forKey: .partialFile)
        bytesReceived = try container.decode(Int64.self, forKey: .bytesReceived)
        totalBytes = try container.decodeIfPresent(Int64.self, forKey: .totalBytes)
        deadline = try container.decodeIfPresent(TimeInterval.self, forKey: .deadline)
        maximumResponseSize = try container.decodeIfPresent(Int.self, forKey: .maximumResponseSize)
        urlWithoutSecrets = try container.decodeIfPresent(Bool.self, forKey: .urlWithoutSecrets) ?? false
    }

    /// Encodes the value with its URL's secret values replaced (see ``url``), so that the file an app
    /// writes it to holds no signature or token.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let stored = Self.storedForm(of: url)
        guard let storedURL = stored.url else {
            let context = EncodingError.Context(
                codingPath: container.codingPath + [CodingKeys.url], debugDescription: "The URL cannot be stored without its secrets")
            throw EncodingError.invalidValue(Redactor().url(url), context)   // the error may be logged: never the URL itself
        }
        try container.encode(storedURL, forKey: .url)
        try container.encode(validator, forKey: .validator)
        try container.encode(partialFile, forKey: .partialFile)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encodeIfPresent(totalBytes, forKey: .totalBytes)
        try container.encodeIfPresent(deadline, forKey: .deadline)
        try container.encodeIfPresent(maximumResponseSize, forKey: .maximumResponseSize)
        if urlWithoutSecrets || stored.removedSecrets { try container.encode(true, forKey: .urlWithoutSecrets) }
    }

    /// Removes the partial file: call it when the app gives the download up. A file that is already gone,
    /// or whose name is not a partial download's (a value decoded from tampered storage), is left alone.
    public func discard() {
        guard Self.isPartialFileName(partialFile.lastPathComponent) else { return }
        try? FileManager.default.removeItem(at: partialFile)   // already gone, or not ours to remove: nothing to report
    }

    /// The URL (its secret query values redacted, presigned URLs' signatures too), the bytes held and the
    /// total; never the validator's or the file's full path.
    public var description: String {
        let total = totalBytes.map { " of \($0)" } ?? ""
        let shown = Self.storedForm(of: url).url.map { Redactor().url($0) } ?? Redactor.placeholder   // signatures too
        return "ResumableDownload(\(shown), \(bytesReceived)\(total) bytes in \(partialFile.lastPathComponent))"
    }

    /// `url` as a value stores it: without its fragment, with the values of secret query items (those a
    /// default ``Redactor`` hides, and the signing names the cache keeps as digests) and any user and
    /// password replaced by their SHA-256 digests (`sha256-<hex>`, as in the cache's keys:
    /// `HTTPCaching.keyURL(_:)`); `removedSecrets` says whether any was. Two URLs have the same stored form
    /// only when they are the same URL (but for the fragment). `url` is `nil` only if no URL could be made
    /// without its secrets.
    static func storedForm(of url: URL) -> (url: URL?, removedSecrets: Bool) {
        let url = url.absoluteURL
        guard url.query != nil || url.fragment != nil || url.user != nil || url.password != nil else { return (url, false) }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return (nil, true) }   // never with its secrets
        let redactor = Redactor()
        let secretItem = components.percentEncodedQueryItems?.contains { item in
            let name = item.name.removingPercentEncoding ?? item.name
            return item.value != nil && (redactor.hidesQueryItem(named: name) || HTTPCaching.signingQueryNames.contains(name.lowercased()))
        }
        let removed = secretItem == true || components.percentEncodedUser != nil || components.percentEncodedPassword != nil
        guard let stored = URL(string: HTTPCaching.keyURL(url)), stored.scheme != nil else { return (nil, true) }
        return (stored, removed)
    }

    /// Whether this value continues a download of `url`, the URL an endpoint builds: its stored form is
    /// exactly this value's (``storedForm(of:)``; a value decoded from its encoded form holds it already,
    /// one kept in memory or stored by an earlier version holds the URL itself). A URL signed afresh, or
    /// with another secret query value, is another URL.
    func isDownload(of url: URL) -> Bool {
        guard let endpoint = Self.storedForm(of: url).url else { return false }
        let own = urlWithoutSecrets ? self.url : Self.storedForm(of: self.url).url
        return own?.absoluteString == endpoint.absoluteString
    }

    /// Whether `name` is a partial download's: `.networking-*.download`, the name the provider gives them.
    static func isPartialFileName(_ name: String) -> Bool {
        StaleTemporaryFiles.isDownload(name) && !name.contains("/")
    }
}

/// A download that opted in to resuming failed or was cancelled after part of its body was written:
/// ``resumable`` continues it, ``underlying`` is what the call would have thrown otherwise.
///
/// Only the calls that take a `resuming:` argument throw it; ``NetworkProvider/download(_:to:interceptor:progress:)``
/// throws the ``underlying`` error and removes the partial file, as it always did.
///
/// ```swift
/// catch let interrupted as DownloadInterrupted {
///     if case NetworkError.cancelled = interrupted.underlying { print("paused") }
///     saved = interrupted.resumable
/// }
/// ```
public struct DownloadInterrupted: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What continues the download: pass it to ``NetworkProvider/download(_:to:resuming:interceptor:progress:)``
    /// or ``NetworkProvider/download(resuming:to:interceptor:progress:)``, or ``ResumableDownload/discard()`` it.
    public let resumable: ResumableDownload
    /// The error the call failed with: a ``NetworkError`` (``NetworkError/cancelled``,
    /// ``NetworkError/transportFailed(_:)``, ``NetworkError/deadlineExceeded(seconds:)``,
    /// ``NetworkError/tooManyAttempts(_:lastError:)``, ...) or what the error mapper made of a status.
    public let underlying: any Error

    init(resumable: ResumableDownload, underlying: any Error) {
        self.resumable = resumable
        self.underlying = underlying
    }

    /// The underlying error's description and how much of the body is kept.
    public var description: String {
        let underlying = (self.underlying as? NetworkError)?.description ?? "\(type(of: self.underlying))"
        return "The download was interrupted after \(resumable.bytesReceived) bytes, which are kept to resume it: \(underlying)"
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}
