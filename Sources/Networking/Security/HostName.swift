/// Host names as pins compare them: ASCII, case-insensitive, one trailing dot ignored (`API.example.com.`
/// is `api.example.com`), IPv6 brackets removed. An internationalized name is compared in its punycode
/// form (`xn--bcher-kva.example`), which is how `URL.host` gives it and how TLS names it; a host that is
/// not ASCII (a percent-encoded one that `URL` decoded) cannot be compared, and is `nil`.
enum HostName {
    /// `host` as it is compared, or `nil` when it is empty, not ASCII, or has an empty label (`a..b`, `.a`).
    static func normalized(_ host: some StringProtocol) -> String? {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.allSatisfy(isAllowed) else { return nil }
        if !name.contains(":") {   // an IPv6 address has no labels to check
            guard !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return nil }
        }
        return name.lowercased()
    }

    /// Whether `host` (normalized) is `domain` (normalized) or, when `includingSubdomains`, one of its
    /// subdomains at any depth: `a.b.example.com` is under `example.com`; `badexample.com` is not.
    static func matches(_ host: String, domain: String, includingSubdomains: Bool) -> Bool {
        host == domain || (includingSubdomains && host.hasSuffix("." + domain))
    }

    /// Letters, digits, `-`, `.`, `_` (found in real host names), and `:` (IPv6).
    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"):
            return true
        default:
            return false
        }
    }
}
