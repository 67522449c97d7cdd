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

    /// Creates a credential.
    public init(accessToken: String, refreshToken: String, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    /// Whether the access token expires within `leeway` seconds of `now` (false when the expiry is unknown).
    public func expires(within leeway: TimeInterval, of now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= leeway
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["accessToken": "<redacted>", "refreshToken": "<redacted>", "expiresAt": expiresAt as Any])
    }

    public var description: String {
        "Credential(accessToken: <redacted>, refreshToken: <redacted>, expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"))"
    }
}
