import Foundation

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
/// The partial file lies beside the destination, named `.networking-*.download`. It is moved into place
/// when the download completes, and removed by ``discard()``; one left alone for more than a day is
/// removed when a later download starts in its folder (the value then resumes from the first byte).
public struct ResumableDownload: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The URL the download's endpoint built (before interceptors adapted it).
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
    }

    /// Removes the partial file: call it when the app gives the download up. A file that is already gone,
    /// or whose name is not a partial download's (a value decoded from tampered storage), is left alone.
    public func discard() {
        guard Self.isPartialFileName(partialFile.lastPathComponent) else { return }
        try? FileManager.default.removeItem(at: partialFile)   // already gone, or not ours to remove: nothing to report
    }

    /// The URL (its secret query values redacted), the bytes held and the total; never the validator's or
    /// the file's full path.
    public var description: String {
        let total = totalBytes.map { " of \($0)" } ?? ""
        return "ResumableDownload(\(Redactor().url(url)), \(bytesReceived)\(total) bytes in \(partialFile.lastPathComponent))"
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
