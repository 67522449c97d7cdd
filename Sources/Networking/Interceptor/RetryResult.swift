import Foundation

/// A retrier's answer to a failed attempt.
public enum RetryResult: Sendable {
    /// Send the request again now (it is adapted again first).
    case retry
    /// Send the request again after this many seconds. The wait ends early, with
    /// ``NetworkError/cancelled``, if the calling task is cancelled.
    case retryWithDelay(TimeInterval)
    /// Give up and throw the attempt's error.
    case doNotRetry
    /// Give up and throw this error instead of the attempt's.
    case doNotRetryWithError(any Error)
}
