import Foundation

/// A URL's scheme, host and port (the port defaulted from the scheme), compared case-insensitively.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The lower-cased scheme, e.g. `https`.
    public let scheme: String
    /// The lower-cased host.
    public let host: String
    /// The port, or the scheme's default port (80 for http, 443 for https).
    public let port: Int?

    /// The origin of `url`.
    public init(_ url: URL) {
        let scheme = url.scheme.map(Self.lowercased) ?? ""
        self.scheme = scheme
        self.host = url.host.map(Self.lowercased) ?? ""
        self.port = url.port ?? Self.defaultPort(for: scheme)
    }

    /// The origin as `scheme://host:port`: the port is shown even when it is the scheme's default, and left out only when unknown.
    public var description: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// `text` lower-cased; itself when it is ASCII without capitals (the usual case: no new string). A plain
    /// loop over the bytes: `allSatisfy` with a range check cost several times more per origin.
    private static func lowercased(_ text: String) -> String {
        for byte in text.utf8 where byte >= 0x80 || (byte >= 0x41 && byte <= 0x5A) { return text.lowercased() }
        return text
    }

    private static func defaultPort(for scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": return 80
        case "https", "wss": return 443
        default: return nil
        }
    }
}
