/// Why a ``PinnedHost`` or a ``ServerTrust`` could not be made: a mistake in the app's pins, found when
/// they are declared (typically at launch), not when a call is made.
///
/// ```swift
/// do {
///     _ = try PinnedHost.host("api.example.com", pins: [currentPin])
/// } catch let error as PinningConfigurationError where error.problem == .missingBackupPin {
///     // add the pin of a backup key, kept offline, that the server does not use yet
/// }
/// ```
public struct PinningConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong. New problems may be added; compare with `==` rather than switching over them.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, in a sentence's second half.
        public let description: String

        private init(_ description: String) {
            self.description = description
        }

        /// The host is neither a host name in ASCII (RFC 1123 §2.1) nor an IP address: empty, with an empty
        /// label, a label that is not letters, digits, `_` and inner hyphens, a port (`api.example.com:8443`), a
        /// wildcard (`*.example.com`: say `includingSubdomains: true` instead), a URL or a path, text that
        /// only looks like an IPv6 address (`1::2::3`), or Unicode (write an internationalized name in punycode,
        /// `xn--…`, as `URL.host` gives it). Such a pin would match no URL, and calls would go out unpinned.
        public static let invalidHostName = Problem(
            "is not a host name (ASCII letters, digits, inner '-', '.'; punycode for international names; no port, no wildcard) or an IP address")
        /// Fewer than two different pins: one must be a backup key, kept offline and not in the server's
        /// current chain, so that replacing the server's key cannot lock the app out. Waive it with
        /// `requiresBackupPin: false` only if you accept that risk.
        public static let missingBackupPin = Problem("has fewer than two different pins; add the pin of a backup key, or pass requiresBackupPin: false")
        /// Two ``PinnedHost``s in one ``ServerTrust`` name the same host with the same `includingSubdomains`.
        public static let duplicateHost = Problem("is pinned twice")

        /// `pin` is not the base64 of a SHA-256 digest (44 characters, ending in `=`, optionally after `sha256/`).
        public static func invalidPin(_ pin: String) -> Problem {
            Problem("has a pin that is not the base64 of a SHA-256 digest: \"\(pin)\"")
        }
    }

    /// The host the pins were declared for, as it was written.
    public let host: String
    /// What is wrong.
    public let problem: Problem

    /// Creates an error (the package makes its own; for tests and fakes).
    public init(host: String, problem: Problem) {
        self.host = host
        self.problem = problem
    }

    /// `Pins for "api.example.com" are not valid: it has fewer than two different pins; …`.
    public var description: String {
        "Pins for \"\(host)\" are not valid: it \(problem)."
    }
}
