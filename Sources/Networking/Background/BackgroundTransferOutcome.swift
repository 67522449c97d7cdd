import Foundation

/// How a background transfer ended, handed to the app through ``BackgroundTransferService/outcomes``,
/// at the launch that learned it (the one that started it, or a later one).
public enum BackgroundTransferOutcome: Sendable {
    /// The transfer ended with an accepted response; a download is at its destination.
    case finished(BackgroundTransferRecord, BackgroundTransferResponse)
    /// The transfer ended without one.
    case failed(BackgroundTransferRecord, BackgroundTransferError)
    /// A record on disk could not be read (torn or corrupted): it was set aside, and its transfer's
    /// outcome cannot be told.
    case unreadableRecord(BackgroundTransferStoreIssue)

    /// The record of the transfer, unless its record was unreadable.
    public var record: BackgroundTransferRecord? {
        switch self {
        case .finished(let record, _), .failed(let record, _): return record
        case .unreadableRecord: return nil
        }
    }
}

/// The accepted response of a background transfer.
public struct BackgroundTransferResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response's header fields.
    public var headers: [String: String]
    /// An upload's response body (at most ``BackgroundTransferService/maximumUploadResponseSize`` bytes);
    /// empty for a download.
    public var body: Data
    /// Where a download's body landed; `nil` for an upload.
    public var file: URL?

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data(), file: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.file = file
    }
}

/// A record of the background transfer store that could not be read.
public struct BackgroundTransferStoreIssue: Sendable, Equatable, CustomStringConvertible {
    /// The record file's name.
    public var name: String
    /// What was wrong with it.
    public var reason: String

    /// Creates an issue.
    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }

    /// The name and the reason.
    public var description: String { "background transfer record \(name): \(reason)" }
}
