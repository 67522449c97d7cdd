#if canImport(Security)
    import Foundation
    import Security

    /// The system's evaluation of a server's chain (Apple platforms only; **not compiled by this
    /// repository's CI**, which runs on Linux). Kept to the calls available from iOS 15 / macOS 12; what is
    /// done with the result is ``ServerTrust``'s plain Swift, tested on Linux.
    enum SystemTrust {
        /// Evaluates `trust` for a TLS server named `host` (the default SSL policy, host name included), and
        /// returns whether the system trusts it and, when it does, the validated chain, leaf first, as DER.
        static func evaluate(_ trust: SecTrust, host: String) -> (trusted: Bool, chain: [Data]) {
            guard SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString)) == errSecSuccess,
                SecTrustEvaluateWithError(trust, nil)
            else { return (false, []) }
            let certificates = SecTrustCopyCertificateChain(trust) as? [SecCertificate] ?? []
            return (true, certificates.map { SecCertificateCopyData($0) as Data })
        }
    }
#endif
