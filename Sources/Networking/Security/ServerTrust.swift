import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a provider decides whether to trust the servers it connects to: the system's evaluation for every
/// host, and for the hosts you pin, the public keys their certificate chain must contain.
///
/// ```swift
/// let trust = try ServerTrust(pinning: [
///     .host("api.example.com", pins: [currentKeyPin, backupKeyPin], expires: nextYear),
///     .host("example.org", includingSubdomains: true, pins: [caKeyPin, backupCAKeyPin], reportOnly: true),
/// ])
/// let provider = NetworkProvider(serverTrust: trust)
/// ```
///
/// **Evaluation (Apple platforms).** For a pinned host, the system evaluates the chain first, as for any
/// `URLSession` (an untrusted chain fails, whatever the pins: ``NetworkError/transportFailed(_:)`` with
/// `serverCertificateUntrusted`); then the pins: when no certificate of the validated chain has one of them,
/// the connection is refused before anything is sent, the call fails with
/// ``NetworkError/pinMismatch(host:)``, and the monitors hear of it
/// (``EventMonitor/pinValidationDidFail(_:context:)``). A report-only host lets the call go on and only
/// reports. Hosts without pins, and hosts whose pins have expired, keep URLSession's default handling.
/// A refused chain, like a call that fails closed, is never retried: the call ends with its error at once,
/// whatever the retriers would say.
///
/// **Where pins cannot be enforced, calls fail closed.** On Linux, swift-corelibs-foundation lets libcurl
/// check TLS and never asks the session delegate, so no pin can be checked: a call to a host with enforced
/// pins in force fails with ``NetworkError/unenforceablePins(host:)`` before it is sent (every redirect hop
/// is checked too), unless the app opted in with `allowsUnenforcedPinning: true`. So does a call to such a
/// host over plain `http`, on every platform. A pin that silently does nothing would be worse than none.
/// (A `URLProtocol` that answers requests itself, such as NetworkingTestSupport's mock, has no TLS either;
/// on Apple platforms its calls are not checked. A provider made from `MockServer.makeConfiguration(basedOn:)`,
/// whose every request the mock answers, keeps its pins but does not enforce them, on every platform; one
/// whose requests are routed to the mock by an adapter still fails closed on Linux.)
public struct ServerTrust: Sendable {
    /// No pins: every host gets the system's evaluation, as with any `URLSession`. A provider's default.
    public static let `default` = ServerTrust(pinnedHosts: [], allowsUnenforcedPinning: false)

    /// Whether this platform can enforce pins: `true` on Apple platforms, where the session delegate
    /// evaluates the server's chain; `false` on Linux, where libcurl checks TLS without asking it.
    public static var canEnforcePins: Bool {
        #if canImport(Security)
            return true
        #else
            return false
        #endif
    }

    /// The pinned hosts.
    public let pinnedHosts: [PinnedHost]
    /// Whether calls to hosts with enforced pins are sent, unpinned, where pins cannot be enforced (Linux);
    /// `false`: they fail with ``NetworkError/unenforceablePins(host:)`` before they are sent.
    public let allowsUnenforcedPinning: Bool
    /// Whether pins are enforced: ``canEnforcePins`` unless a test says otherwise, to see on every platform
    /// what Linux does.
    package var enforcesPins = ServerTrust.canEnforcePins
    /// Whether every request is answered by the test kit (a provider whose configuration routes all its
    /// requests to a `HeaderRoutedURLProtocol`): no TLS, so pins are neither checked nor fail closed.
    /// Set by the provider alone, from its own configuration: no app type can switch pinning off.
    package var isAnsweredByTestKit = false

    /// Pins the hosts of `hosts`.
    ///
    /// - Parameters:
    ///   - hosts: the pinned hosts; a host that several of them cover follows the most specific one (the
    ///     longest name; the exact host over a domain of the same name), even when that one has expired.
    ///   - allowsUnenforcedPinning: `true` to send calls to pinned hosts, unpinned, on a platform that cannot
    ///     enforce pins (Linux: see ``canEnforcePins``). By default they fail before they are sent.
    /// - Throws: ``PinningConfigurationError`` with ``PinningConfigurationError/Problem/duplicateHost`` when
    ///   two of `hosts` name the same host (and the same `includingSubdomains`).
    public init(pinning hosts: [PinnedHost], allowsUnenforcedPinning: Bool = false) throws {
        var seen = Set<String>()
        for host in hosts where !seen.insert("\(host.includesSubdomains) \(host.host)").inserted {
            throw PinningConfigurationError(host: host.host, problem: .duplicateHost)
        }
        self.init(pinnedHosts: hosts, allowsUnenforcedPinning: allowsUnenforcedPinning)
    }

    private init(pinnedHosts: [PinnedHost], allowsUnenforcedPinning: Bool) {
        self.pinnedHosts = pinnedHosts
        self.allowsUnenforcedPinning = allowsUnenforcedPinning
    }

    /// The pin of a certificate's public key: the base64 SHA-256 of its SubjectPublicKeyInfo, the same value
    /// openssl computes. `certificate` is DER (a `.cer`/`.der` file, `SecCertificateCopyData`) or PEM (its
    /// first certificate); `nil` when it is not a certificate.
    ///
    /// ```swift
    /// let pin = try ServerTrust.publicKeyPin(ofCertificate: Data(contentsOf: bundledCertificate))
    /// ```
    public static func publicKeyPin(ofCertificate certificate: Data) -> String? {
        CertificateKey.pin(ofCertificate: certificate)
    }

    /// The pinned host that decides for `host` (a name as `URL.host` gives it, or an IP address in any of its
    /// spellings, with or without brackets), whether or not it is in force now; `nil` when none covers it.
    public func pinnedHost(for host: String) -> PinnedHost? {
        HostName.normalized(host).flatMap(pinnedHost(forNormalized:))
    }

    /// The most specific pinned host that covers `host` (normalized).
    func pinnedHost(forNormalized host: String) -> PinnedHost? {
        var best: PinnedHost?
        for candidate in pinnedHosts where candidate.covers(host) {
            if let current = best, current.specificity >= candidate.specificity { continue }
            best = candidate
        }
        return best
    }

    /// Whether any host has pins that are enforced (not report-only) and in force at `date`.
    func hasEnforcedPins(at date: Date) -> Bool {
        pinnedHosts.contains { !$0.isReportOnly && $0.isInForce(at: date) }
    }

    /// Throws ``NetworkError/unenforceablePins(host:)`` when a request to `url` must not be sent: its host has
    /// enforced pins in force at `date` (now), and the request is not https or the pins cannot be enforced
    /// here (unless ``allowsUnenforcedPinning``). A host that cannot be compared (not ASCII) counts as pinned
    /// while any host has enforced pins. The provider calls it before every hop; without pins it costs a check.
    func checkEnforceable(_ url: URL?, at now: @autoclosure () -> Date = Date()) throws {
        guard !pinnedHosts.isEmpty, let url else { return }
        let date = now()
        guard let host = url.host else {   // `https:/api.example.com/x`: libcurl may still find a host in it
            if hasEnforcedPins(at: date) { throw NetworkError.unenforceablePins(host: "(a URL without a host)") }
            return
        }
        guard let name = HostName.normalized(host) else {
            if hasEnforcedPins(at: date) { throw NetworkError.unenforceablePins(host: host) }
            return
        }
        guard let pinned = pinnedHost(forNormalized: name), !pinned.isReportOnly, pinned.isInForce(at: date) else { return }
        // The test kit's mock has no TLS to check: its calls are let through, the other rules still hold.
        guard url.scheme?.lowercased() == "https", enforcesPins || allowsUnenforcedPinning || isAnsweredByTestKit else {
            throw NetworkError.unenforceablePins(host: name)
        }
    }
}
