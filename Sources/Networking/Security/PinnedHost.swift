import Foundation

/// The public keys a host must present, one of a ``ServerTrust``'s policies: a host (or a domain with its
/// subdomains), the pins of the keys it may use, and optionally a date after which the pins stop applying
/// and a report-only mode.
///
/// A pin is the base64 of the SHA-256 of a certificate's SubjectPublicKeyInfo, as HPKP and TrustKit write
/// them. A connection to the host is accepted when the system trusts its chain **and** any certificate of
/// that chain (leaf, intermediate or root) has one of the pins. Compute a pin with openssl:
///
/// ```sh
/// openssl x509 -in api.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
/// ```
///
/// or in Swift with ``ServerTrust/publicKeyPin(ofCertificate:)``.
///
/// ```swift
/// let api = try PinnedHost.host(
///     "example.com", includingSubdomains: true,
///     pins: ["cUPcTAZWKaASuYWhhneDttWpY3oBAkE3h2+soZS7sWs=",   // the intermediate CA's key
///            "M8HztCzM3elUxkcjR2S5P4hhyBNf6lHkmjAHKhpGPWE="],  // a backup key, kept offline
///     expires: Date(timeIntervalSince1970: 1_830_297_600))       // 2028-01-01: update the app before then
/// ```
public struct PinnedHost: Sendable, Hashable {
    /// The host or domain, as compared: lowercase, without a trailing dot; an IP address in its canonical form
    /// (IPv6 as RFC 5952 §4 writes it, without brackets; an IPv4-mapped IPv6 address as its IPv4).
    public let host: String
    /// Whether subdomains at any depth are covered too (`a.b.example.com` by `example.com`; never
    /// `badexample.com`).
    public let includesSubdomains: Bool
    /// The pins, in canonical base64 (44 characters), in the order given, without repeats.
    public let pins: [String]
    /// When the pins stop applying, if ever: from this date the host gets the system's evaluation alone, so
    /// an app that is not updated is not locked out of a server that changed its keys.
    public let expires: Date?
    /// Whether a mismatch only reports (``EventMonitor/pinValidationDidFail(_:context:)``) and lets the call
    /// go on, to try pins out before enforcing them.
    public let isReportOnly: Bool

    /// Pins `host` (and its subdomains when `includingSubdomains`) to `pins`.
    ///
    /// - Parameters:
    ///   - host: a host name in ASCII, as `URL.host` gives it: case and one trailing dot do not matter; an
    ///     internationalized name in punycode (`xn--bcher-kva.example`). Or an IP address: IPv4 in
    ///     dotted-decimal (`192.0.2.1`), IPv6 with or without brackets (`2001:db8::1`, `[::1]`), which covers
    ///     every spelling of that address (`[0:0:0:0:0:0:0:1]` is `::1`; `::ffff:192.0.2.1` is `192.0.2.1`).
    ///     No port, scheme, path or wildcard (use `includingSubdomains`).
    ///   - includingSubdomains: whether every subdomain of `host`, at any depth, is pinned too. A subdomain
    ///     with a ``PinnedHost`` of its own follows that one (the longest name wins; an exact host wins over
    ///     a domain of the same name). An IP address has no subdomains: for one it is ignored, and the address alone
    ///     is pinned.
    ///   - pins: the base64 SHA-256 pins of the SubjectPublicKeyInfo of keys in the host's chain (an optional
    ///     `sha256/` prefix, as OkHttp writes them, is accepted). At least two different ones: the key in use
    ///     and a backup key that is **not** in the current chain, so a lost or rotated key cannot lock the
    ///     app out.
    ///   - expires: the date from which the pins no longer apply (the host then gets the system's evaluation
    ///     alone); `nil` for never. Set it to a date by which every user will have an update.
    ///   - reportOnly: `true` to let a call whose chain matches no pin go on, and tell the monitors; the pins
    ///     change nothing else, and are not required where they cannot be checked (see ``ServerTrust``).
    ///   - requiresBackupPin: `false` waives the two-pin rule, for a host whose single key you accept to be
    ///     locked out by.
    /// - Throws: ``PinningConfigurationError``: a host that is not a host name or an IP address
    ///   (``PinningConfigurationError/Problem/invalidHostName``: `api.example.com:8443`, `https://…`, `*.x`),
    ///   a pin that is not a base64 SHA-256, fewer than two
    ///   different pins.
    public static func host(
        _ host: String,
        includingSubdomains: Bool = false,
        pins: [String],
        expires: Date? = nil,
        reportOnly: Bool = false,
        requiresBackupPin: Bool = true
    ) throws -> PinnedHost {
        guard let (name, isAddress) = HostName.declared(host) else {
            throw PinningConfigurationError(host: host, problem: .invalidHostName)
        }
        var canonical: [String] = []
        for pin in pins {
            let digits = pin.hasPrefix("sha256/") ? String(pin.dropFirst("sha256/".count)) : pin
            guard let digest = Data(base64Encoded: digits), digest.count == 32 else {
                throw PinningConfigurationError(host: host, problem: .invalidPin(pin))
            }
            let value = digest.base64EncodedString()
            if !canonical.contains(value) { canonical.append(value) }
        }
        guard canonical.count >= 2 || (!requiresBackupPin && !canonical.isEmpty) else {
            throw PinningConfigurationError(host: host, problem: .missingBackupPin)
        }
        return PinnedHost(host: name, includesSubdomains: includingSubdomains && !isAddress, pins: canonical, expires: expires, isReportOnly: reportOnly)
    }

    private init(host: String, includesSubdomains: Bool, pins: [String], expires: Date?, isReportOnly: Bool) {
        self.host = host
        self.includesSubdomains = includesSubdomains
        self.pins = pins
        self.expires = expires
        self.isReportOnly = isReportOnly
    }

    /// Whether the pins apply at `date`: before ``expires``, or always when there is none.
    public func isInForce(at date: Date) -> Bool {
        expires.map { date < $0 } ?? true
    }

    /// Whether this policy names `host` (normalized), itself or as a subdomain.
    func covers(_ host: String) -> Bool {
        HostName.matches(host, domain: self.host, includingSubdomains: includesSubdomains)
    }

    /// How specific this policy is, to choose among those that cover a host: the longer name, then the
    /// exact host over the domain.
    var specificity: (Int, Int) {
        (host.utf8.count, includesSubdomains ? 0 : 1)
    }
}
