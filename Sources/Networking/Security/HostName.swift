/// Host names as pins compare them: ASCII, case-insensitive, one trailing dot ignored (`API.example.com.`
/// is `api.example.com`). An internationalized name is compared in its punycode form
/// (`xn--bcher-kva.example`), which is how `URL.host` gives it and how TLS names it. An IP address is
/// compared by value (see ``IPAddress``): `[0:0:0:0:0:0:0:1]`, `[0::1]` and `::1` are one host, with or
/// without brackets.
///
/// Two readings: ``declared(_:)`` is strict, for the host a pin names (a mistake there would be a pin that
/// never applies, so the call would go out unpinned); ``normalized(_:)`` is lenient, for the hosts URLs and
/// challenges give, which must be compared whatever they are.
enum HostName {
    /// The host a pin names, as compared, and whether it is an IP address; `nil` when it is none of: a DNS
    /// host name (RFC 1123 §2.1 labels of letters, digits and inner hyphens, 1 to 63 characters (and `_`), 253 in all,
    /// one optional trailing dot, its last label not all digits), an IPv4 address (in any spelling `inet_aton`
    /// reads, as its dotted quad), an IPv6
    /// address (RFC 4291 §2.2), with or without brackets. So a port (`host:443`), a URL, a path, a wildcard
    /// or a zone (`fe80::1%en0`) is refused.
    static func declared(_ host: String) -> (name: String, isAddress: Bool)? {
        if host.hasPrefix("[") || host.contains(":") {
            var address = Substring(host)
            if host.hasPrefix("[") {
                guard host.hasSuffix("]") else { return nil }
                address = address.dropFirst().dropLast()
            }
            return IPAddress.canonicalIPv6(address).map { ($0, true) }
        }
        var name = Substring(host)
        if name.hasSuffix(".") { name = name.dropLast() }
        guard (1...253).contains(name.utf8.count) else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy(isLabel), let last = labels.last else { return nil }
        // An IPv4 address in any spelling a resolver reads (`127.1`, `0x7f.0.0.1`) is the address it names, as
        // a URL's host is: a pin on it covers the same URLs whatever the spelling, and never matches no URL.
        if let address = IPAddress.lenientIPv4(name) { return (address, true) }
        if last.utf8.allSatisfy(isDigit) { return nil }   // no top-level domain is all digits, and this is no address
        return (name.lowercased(), false)
    }

    /// `host` (as `URL.host` or a challenge gives it) as it is compared, or `nil` when it cannot be: empty,
    /// not ASCII, with an empty label (`a..b`, `.a`), or text with a `:` that is no IPv6 address. An IPv6
    /// address loses its brackets and its zone (`%en0`); an IPv4 address in a form resolvers accept (`127.1`,
    /// `0x7f.0.0.1`) becomes its dotted quad. A name may have `_`, found in real host names.
    static func normalized(_ host: some StringProtocol) -> String? {
        var name = Substring(host)
        let bracketed = name.hasPrefix("[") && name.hasSuffix("]")
        if bracketed { name = name.dropFirst().dropLast() }
        if bracketed || name.contains(":") {
            if let zone = name.firstIndex(of: "%") { name = name[..<zone] }
            return IPAddress.canonicalIPv6(name)
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.allSatisfy(isAllowed) else { return nil }
        guard !name.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return nil }
        return IPAddress.lenientIPv4(name) ?? name.lowercased()
    }

    /// Whether `host` (normalized) is `domain` (normalized) or, when `includingSubdomains`, one of its
    /// subdomains at any depth: `a.b.example.com` is under `example.com`; `badexample.com` is not. An IP
    /// address is under no domain.
    static func matches(_ host: String, domain: String, includingSubdomains: Bool) -> Bool {
        host == domain || (includingSubdomains && host.hasSuffix("." + domain) && !IPAddress.isLiteral(host))
    }

    /// Whether `label` is an RFC 1123 label: 1 to 63 letters, digits and hyphens, neither first nor last a hyphen;
    /// `_` is let through too, as URLs and real internal host names have it (it cannot make a pin fail open: a
    /// pin on `my_host` matches the URLs that name `my_host`).
    private static func isLabel(_ label: Substring) -> Bool {
        (1...63).contains(label.utf8.count)
            && label.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
            && label.utf8.first != UInt8(ascii: "-") && label.utf8.last != UInt8(ascii: "-")
    }

    /// Letters, digits, `-`, `.` and `_`: what a host name `URL` gives may hold.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        isLetterOrDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
