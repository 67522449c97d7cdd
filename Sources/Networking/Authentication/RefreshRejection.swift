import Foundation

/// How an ``AuthInterceptor`` judges that a failed refresh means the refresh token was rejected (the
/// session ends) rather than a transient failure (the credential is kept).
///
/// The status rule: the refresh's own call last got an unacceptable status of 400, 401 or 403
/// (``AuthInterceptor/rejectionStatusCodes``; OAuth's `invalid_grant` is a 400, RFC 6749 §5.2), or an
/// envelope failure standing for one (``EnvelopeFailure/standsForStatus``), whatever the app's error
/// mapper made of it; or the refresh threw ``NetworkError/sessionExpired``.
///
/// It replaces the `isRejection:` parameter (deprecated), which used to replace the status rule and now adds
/// to it: `isRejection: f` now means `.statusRule(or: f)`; `.only(f)` is what it meant before.
///
/// ```swift
/// // The app's own refusal code, inside a 200, ends the session too; a plain 401 invalid_grant still does.
/// let rejection = RefreshRejection.statusRule(or: { ($0 as? APIError)?.code == "E_REFRESH" })
/// ```
public struct RefreshRejection: Sendable {
    /// The app's own test, asked about the refresh's error.
    let isRejection: @Sendable (any Error) -> Bool
    /// Whether the status rule applies as well.
    let keepsStatusRule: Bool

    /// The status rule alone: the default.
    public static let statusRule = RefreshRejection(isRejection: { _ in false }, keepsStatusRule: true)

    /// The status rule, and `isRejection` as well: a refresh error for which it returns `true` is a
    /// rejection too (the app's refusal code inside a `200`, say).
    public static func statusRule(or isRejection: @escaping @Sendable (any Error) -> Bool) -> RefreshRejection {
        RefreshRejection(isRejection: isRejection, keepsStatusRule: true)
    }

    /// `isRejection` alone, instead of the status rule: a 400, 401 or 403 to the refresh call no longer
    /// ends the session unless `isRejection` says so. For an auth server whose 4xx answers can be
    /// transient; most apps want ``statusRule(or:)``.
    public static func only(_ isRejection: @escaping @Sendable (any Error) -> Bool) -> RefreshRejection {
        RefreshRejection(isRejection: isRejection, keepsStatusRule: false)
    }

    /// Whether the refresh's `error`, whose own call last got the unacceptable `status` (if any), is a rejection.
    func judges(_ error: any Error, status: Int?) -> Bool {
        if keepsStatusRule, AuthInterceptor.isRefreshTokenRejection(error) || status.map(AuthInterceptor.rejectionStatusCodes.contains) == true {
            return true
        }
        return isRejection(error)
    }
}
