import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the session delegate does with a server-trust challenge, decided in plain Swift from the host, the
/// date, and the system's evaluation of the chain (which only Apple platforms can give: see
/// ``SystemTrust``). Everything here is tested on Linux; the glue that feeds it a `SecTrust` is not.
enum ServerTrustVerdict: Equatable, Sendable {
    /// No pins in force for the host: URLSession's default handling, as without a policy.
    case performDefaultHandling
    /// The system trusts the chain and a certificate of it has one of the pins.
    case accept
    /// The system trusts the chain, which has none of the pins of a report-only host: accepted, and reported.
    case acceptReporting(PinMismatch)
    /// Refused: the call fails with `error`; `mismatch` is reported when the pins did not match.
    case reject(NetworkError, mismatch: PinMismatch?)
}

extension ServerTrust {
    /// The verdict on a connection to `host` at `date`. `evaluate` is the system's evaluation of the
    /// server's chain: whether it is trusted and, when it is, the validated chain, leaf first, as DER; it is
    /// called only for a host whose pins are in force.
    func verdict(forHost host: String, at date: Date, evaluate: () -> (trusted: Bool, chain: [Data])) -> ServerTrustVerdict {
        guard !pinnedHosts.isEmpty else { return .performDefaultHandling }
        guard let name = HostName.normalized(host) else {
            return hasEnforcedPins(at: date) ? .reject(.unenforceablePins(host: host), mismatch: nil) : .performDefaultHandling
        }
        guard let pinned = pinnedHost(forNormalized: name), pinned.isInForce(at: date) else { return .performDefaultHandling }
        let (trusted, chain) = evaluate()
        guard trusted else {
            // Report-only changes nothing: the system answers as it would have (ATS exceptions included).
            return pinned.isReportOnly ? .performDefaultHandling : .reject(.transportFailed(URLError(.serverCertificateUntrusted)), mismatch: nil)
        }
        let presented = chain.compactMap { CertificateKey.subjectPublicKeyInfo(of: [UInt8]($0)).map(CertificateKey.pin(ofSubjectPublicKeyInfo:)) }
        if presented.contains(where: pinned.pins.contains) { return .accept }
        let mismatch = PinMismatch(host: name, presentedPins: presented, expectedPins: pinned.pins, isReportOnly: pinned.isReportOnly)
        return pinned.isReportOnly ? .acceptReporting(mismatch) : .reject(.pinMismatch(host: name), mismatch: mismatch)
    }
}
