import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `NetworkError` is `Equatable`, so tests read as one line:
///
/// ```swift
/// await #expect(throws: NetworkError.invalidStatusCode(404)) {
///     try await provider.response(UserAPI.user(id: 999))
/// }
/// ```
///
/// Cases are equal when their payloads are. An error a case carries (``NetworkError/encodingFailed(_:)``,
/// ``NetworkError/refreshFailed(_:)``, ``NetworkError/fileWriteFailed(_:)``, the last error of
/// ``NetworkError/tooManyAttempts(_:lastError:)``) is compared by `==` when its type is `Equatable` (a
/// carried `NetworkError`, your own `Equatable` errors), a `URLError` by its code, and any other error by its
/// type, domain and code only (so make your error types `Equatable` to compare their payloads). Seconds
/// compare exactly: a ``NetworkError/retryAfter(seconds:statusCode:)`` from an HTTP date is fractional.
/// A ``NetworkError/decodingFailed(type:error:)`` compares its type name and the kind and coding path of
/// its error.
extension NetworkError: Equatable {
    /// Whether `lhs` and `rhs` are the same case with equal payloads; a carried error compares by `==` when it is `Equatable`,
    /// a `URLError` by its code, any other by its type, domain and code.
    public static func == (lhs: NetworkError, rhs: NetworkError) -> Bool {
        switch lhs {
        case let .invalidURL(a):
            guard case let .invalidURL(b) = rhs else { return false }
            return a == b
        case let .invalidRequest(field, reason):
            guard case let .invalidRequest(otherField, otherReason) = rhs else { return false }
            return field == otherField && reason == otherReason
        case let .encodingFailed(a):
            guard case let .encodingFailed(b) = rhs else { return false }
            return same(a, b)
        case let .transportFailed(a):
            guard case let .transportFailed(b) = rhs else { return false }
            return a.code == b.code
        case let .invalidStatusCode(a):
            guard case let .invalidStatusCode(b) = rhs else { return false }
            return a == b
        case let .redirectWouldForwardBody(a):
            guard case let .redirectWouldForwardBody(b) = rhs else { return false }
            return a == b
        case let .insecureRedirect(a):
            guard case let .insecureRedirect(b) = rhs else { return false }
            return a == b
        case let .decodingFailed(type, error):
            guard case let .decodingFailed(otherType, otherError) = rhs else { return false }
            return type == otherType && summary(of: error) == summary(of: otherError)
        case .cancelled:
            guard case .cancelled = rhs else { return false }
            return true
        case let .tooManyAttempts(count, error):
            guard case let .tooManyAttempts(otherCount, otherError) = rhs else { return false }
            return count == otherCount && same(error, otherError)
        case .sessionExpired:
            guard case .sessionExpired = rhs else { return false }
            return true
        case .missingCredential:
            guard case .missingCredential = rhs else { return false }
            return true
        case let .excessiveRefresh(count, window):
            guard case let .excessiveRefresh(otherCount, otherWindow) = rhs else { return false }
            return count == otherCount && window == otherWindow
        case let .refreshFailed(a):
            guard case let .refreshFailed(b) = rhs else { return false }
            return same(a, b)
        case let .retryAfter(seconds, status):
            guard case let .retryAfter(otherSeconds, otherStatus) = rhs else { return false }
            return seconds == otherSeconds && status == otherStatus
        case let .deadlineExceeded(a):
            guard case let .deadlineExceeded(b) = rhs else { return false }
            return a == b
        case let .responseTooLarge(a):
            guard case let .responseTooLarge(b) = rhs else { return false }
            return a == b
        case let .fileWriteFailed(a):
            guard case let .fileWriteFailed(b) = rhs else { return false }
            return same(a, b)
        case .notCached:
            guard case .notCached = rhs else { return false }
            return true
        case let .pinMismatch(a):
            guard case let .pinMismatch(b) = rhs else { return false }
            return a == b
        case let .unenforceablePins(a):
            guard case let .unenforceablePins(b) = rhs else { return false }
            return a == b
        case .offline:
            guard case .offline = rhs else { return false }
            return true
        }
    }

    /// Whether two carried errors are the same, as far as any two errors can be compared.
    private static func same(_ a: any Error, _ b: any Error) -> Bool {
        if let a = a as? URLError, let b = b as? URLError { return a.code == b.code }
        if let a = a as? DecodingError, let b = b as? DecodingError { return summary(of: a) == summary(of: b) }
        // The type's own ==, when it has one; not for NSError, whose == is identity (and a cast of a
        // Swift error to `any Equatable` would bridge it to one: the metatype is asked instead).
        if !(type(of: a) is NSError.Type), let equatable = type(of: a) as? any Equatable.Type {
            return equal(as: equatable, a, b)
        }
        let (nsA, nsB) = (a as NSError, b as NSError)
        return type(of: a) == type(of: b) && nsA.domain == nsB.domain && nsA.code == nsB.code
    }
}

/// Whether `a` and `b` are both `T`s and equal.
private func equal<T: Equatable>(as type: T.Type, _ a: Any, _ b: Any) -> Bool {
    guard let a = a as? T, let b = b as? T else { return false }
    return a == b
}
