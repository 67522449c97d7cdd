import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a background transfer failed.
public enum BackgroundTransferError: Error, Sendable, CustomStringConvertible {
    /// The server answered with a "token expired" status (401 by default). A background task cannot be
    /// sent again with a new token: enqueue it again (after a refresh when `credentialRefreshedSince` is
    /// `false`; at once when it is `true`, the account being the same).
    case unauthorized(statusCode: Int, credentialRefreshedSince: Bool)
    /// The system no longer knows the transfer's task (the app was deleted and reinstalled, the user
    /// force-quit it, or the task was never created): its outcome cannot be told.
    case lost
    /// The app cancelled the transfer.
    case cancelled
    /// The downloaded body does not carry the validator the transfer expected.
    case validatorMismatch(expected: String, received: String?)
    /// The system followed a redirect to another origin (another host, port, or https → http: RFC 9110
    /// §4.3.1, §15.4), as background sessions do without asking the app: the response is not trusted, and a
    /// download's body is not landed. The request (its token, an upload's body) may have gone there.
    case redirectedToAnotherOrigin(Origin)
    /// The signed-in account is not the one the transfer must be sent for; nothing was sent.
    case accountChanged
    /// The failure as the provider would report it: an unacceptable status, a transport error, a body
    /// over the size limit, a file that could not be written, a redirect the rules refuse.
    case network(NetworkError)

    /// What went wrong, with no secret in it.
    public var description: String {
        switch self {
        case let .unauthorized(statusCode, refreshed):
            return "The server answered \(statusCode) (token expired)" + (refreshed ? "; the credential was refreshed since." : ".")
        case .lost: return "The system no longer knows this background transfer."
        case .cancelled: return "The background transfer was cancelled."
        case let .validatorMismatch(expected, received):
            return "The downloaded body's validator \(received ?? "(none)") is not the expected \(expected)."
        case .redirectedToAnotherOrigin(let origin): return "The system followed a redirect to another origin, \(origin)."
        case .accountChanged: return "The signed-in account is not the transfer's account; nothing was sent."
        case let .network(error): return error.description
        }
    }
}
