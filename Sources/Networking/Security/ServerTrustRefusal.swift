/// The session delegate's refusal of a server's chain (``ServerTrustVerdict/reject(_:mismatch:)``), on its
/// way from the task's completion to the attempt loop: a failure no retrier is asked about. Another handshake
/// would meet the same chain (or the same interceptor), and Docs/Security.md promises the call ends at once
/// with its own error — as a cancellation does — whatever ``RetryPolicy`` or the app's retriers would say.
///
/// It wraps the error the call fails with, which is never seen wrapped: the provider throws ``error``.
struct ServerTrustRefusal: Error {
    /// The call's error: ``NetworkError/pinMismatch(host:)``, or ``NetworkError/transportFailed(_:)`` with
    /// `serverCertificateUntrusted` when the system did not trust the chain of a pinned host.
    let error: NetworkError

    /// The error a failed attempt ends its call with at once, without asking a retrier: the refusal's own when
    /// `error` is one; `nil` for every other failure, which the usual rules decide.
    static func endingTheCall(_ error: any Error) -> NetworkError? {
        (error as? ServerTrustRefusal)?.error
    }
}
