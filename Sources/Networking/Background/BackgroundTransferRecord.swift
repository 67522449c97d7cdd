import Foundation

/// What a ``BackgroundTransferService`` keeps on disk about one transfer, written before its task is
/// resumed: what the app needs to finish it at a later launch, after the `await` that started it is gone.
///
/// It holds no secret: the endpoint is described with its secret query values hidden (as ``Redactor``
/// hides them), and the token the task was sent with is kept only as a SHA-256 fingerprint, to tell
/// whether the credential was refreshed since.
public struct BackgroundTransferRecord: Codable, Sendable, Hashable, Identifiable {
    /// An upload or a download.
    public enum Kind: String, Codable, Sendable {
        /// A body sent from a file.
        case upload
        /// A body received into a file.
        case download
    }

    /// The transfer's identity; also the label of its system task.
    public let id: UUID
    /// An upload or a download.
    public let kind: Kind
    /// The request's method.
    public let method: String
    /// The request's URL, its secret query values hidden.
    public let url: URL
    /// Where a download lands; `nil` for an upload.
    public let destination: URL?
    /// The validator (an `ETag`) the downloaded body must carry, when the app named one.
    public let expectedValidator: String?
    /// The most bytes a download may have.
    public let maximumSize: Int64?
    /// The statuses that count as success.
    public let acceptableStatusCodes: Set<Int>
    /// The account the transfer was sent for (``Credential/account``), `nil` when unauthenticated or unknown.
    public let account: String?
    /// The app's own tag, to find its work again (a photo's identifier, a queue name).
    public let tag: String
    /// When the transfer was enqueued.
    public let createdAt: Date
    /// The upload's body file, when the service wrote it (a spooled form or an in-memory body) and removes it.
    let ownedBodyFile: URL?
    /// The hex SHA-256 of the access token sent, when one was.
    let tokenFingerprint: String?
    /// The statuses that mean "token expired" for the interceptor that authenticated it.
    let expiredStatusCodes: Set<Int>
    /// The app's home directory (its container) when the record was written: an app update moves the
    /// container, and the paths in the record move with it (``rebased(home:bodies:)``).
    let homeDirectory: String?

    /// The method and URL as text, its secret query values hidden.
    public var endpoint: String { "\(method) \(url.absoluteString)" }

    init(
        id: UUID, kind: Kind, method: String, url: URL, destination: URL?, expectedValidator: String?, maximumSize: Int64?,
        acceptableStatusCodes: Set<Int>, account: String?, tag: String, createdAt: Date, ownedBodyFile: URL?, tokenFingerprint: String?,
        expiredStatusCodes: Set<Int>, homeDirectory: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.method = method
        self.url = url
        self.destination = destination
        self.expectedValidator = expectedValidator
        self.maximumSize = maximumSize
        self.acceptableStatusCodes = acceptableStatusCodes
        self.account = account
        self.tag = tag
        self.createdAt = createdAt
        self.ownedBodyFile = ownedBodyFile
        self.tokenFingerprint = tokenFingerprint
        self.expiredStatusCodes = expiredStatusCodes
        self.homeDirectory = homeDirectory
    }

    /// The record with its paths in the container at `home`: a destination under the home directory it was
    /// written in is moved under `home`, the body file the service wrote is in `bodies`.
    func rebased(home: String, bodies: URL) -> BackgroundTransferRecord {
        var destination = self.destination
        if let old = homeDirectory, old != home, let path = destination?.standardizedFileURL.path,
            path.hasPrefix(old.hasSuffix("/") ? old : old + "/")
        {
            destination = URL(fileURLWithPath: home).appendingPathComponent(String(path.dropFirst(old.count)))
        }
        return BackgroundTransferRecord(
            id: id, kind: kind, method: method, url: url, destination: destination, expectedValidator: expectedValidator, maximumSize: maximumSize,
            acceptableStatusCodes: acceptableStatusCodes, account: account, tag: tag, createdAt: createdAt,
            ownedBodyFile: ownedBodyFile.map { bodies.appendingPathComponent($0.lastPathComponent) }, tokenFingerprint: tokenFingerprint,
            expiredStatusCodes: expiredStatusCodes, homeDirectory: home)
    }

    /// The label of the transfer's system task.
    var label: String { id.uuidString }
}
