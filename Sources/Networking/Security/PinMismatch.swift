/// A server whose validated certificate chain has none of its host's pins, as monitors hear of it
/// (``EventMonitor/pinValidationDidFail(_:context:)``). It names keys only by their pins (hashes of public
/// keys), never by the certificates' contents, so it can be logged and sent as it is.
public struct PinMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The host connected to, as compared (see ``PinnedHost/host``): lowercase, without a trailing dot; an IP
    /// address in its canonical form.
    public let host: String
    /// The pins of the keys of the chain the server presented, leaf first, as the system validated it.
    public let presentedPins: [String]
    /// The pins of the ``PinnedHost`` that decided for the host.
    public let expectedPins: [String]
    /// Whether the host's pins are report-only: the call went on. Otherwise it failed with
    /// ``NetworkError/pinMismatch(host:)`` before anything was sent.
    public let isReportOnly: Bool

    /// Creates a mismatch (the provider makes its own; for tests and fakes).
    public init(host: String, presentedPins: [String], expectedPins: [String], isReportOnly: Bool) {
        self.host = host
        self.presentedPins = presentedPins
        self.expectedPins = expectedPins
        self.isReportOnly = isReportOnly
    }

    /// `api.example.com presented keys [a…=, b…=], none of its pins [c…=, d…=]: the call was stopped`.
    public var description: String {
        let outcome = isReportOnly ? "report-only, the call went on" : "the call was stopped"
        return "\(host) presented keys [\(presentedPins.joined(separator: ", "))], none of its pins [\(expectedPins.joined(separator: ", "))]: \(outcome)"
    }
}
