import Foundation

/// An access token, the refresh token that renews it, and when the access token expires if known.
///
/// Neither `description` nor `dump` shows the tokens, so a credential is safe to print or log.
public struct Credential: Codable, Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The token sent with each request.
    public var accessToken: String
    /// The token sent to the refresh endpoint to get a new credential.
    public var refreshToken: String
    /// When the access token stops working, if the server said; enables proactive refresh.
    public var expiresAt: Date?
    /// Who signed in: a stable identity of the account (a user ID, not a token, which rotates), or `nil`.
    /// The provider's response cache files the responses of authenticated calls under it, so one account
    /// never receives another's, and clears them when this account signs out or its session expires.
    /// Without it, authenticated calls are not cached. A refreshed credential without one keeps the
    /// account of the credential it replaced. It is not a secret: descriptions show it.
    public var account: String?

    /// Creates a credential.
    public init(accessToken: String, refreshToken: String, expiresAt: Date? = nil, account: String? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.account = account
    }

    /// Whether the access token expires within `leeway` seconds of `now` (false when the expiry is unknown).
    public func expires(within leeway: TimeInterval, of now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= leeway
    }

    /// A mirror with both tokens replaced by `<redacted>`, so `dump` never shows them.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["accessToken": "<redacted>", "refreshToken": "<redacted>", "expiresAt": expiresAt as Any, "account": account as Any])
    }

    /// A description with both tokens redacted; it shows only the expiry and the account.
    public var description: String {
        "Credential(accessToken: <redacted>, refreshToken: <redacted>, expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown")"
            + (account.map { ", account: \($0)" } ?? "") + ")"
    }
}
