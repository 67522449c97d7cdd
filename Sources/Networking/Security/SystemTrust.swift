#if canImport(Security)
    import Foundation
    import Security

    /// The system's evaluation of a server's chain (Apple platforms only; **not compiled by this
    /// repository's CI**, which runs on Linux). Kept to calls available from iOS 15 / macOS 12; what is done
    /// with the result is ``ServerTrust``'s plain Swift, tested on Linux.
    enum SystemTrust {
        /// Evaluates `trust` as URLSession's default handling would (the trust of a server-trust challenge
        /// carries the SSL policy for the host it is for), and returns whether the system trusts it and, when
        /// it does, the validated chain, leaf first, as DER. It may block while the system fetches what it
        /// needs (an intermediate, revocation status): it runs on the session delegate's queue.
        static func evaluate(_ trust: SecTrust) -> (trusted: Bool, chain: [Data]) {
            guard SecTrustEvaluateWithError(trust, nil) else { return (false, []) }
            let certificates = SecTrustCopyCertificateChain(trust) as? [SecCertificate] ?? []
            return (true, certificates.map { SecCertificateCopyData($0) as Data })
        }
    }
#endif
