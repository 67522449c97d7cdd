import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which hosts can be pinned, and how a pinned address is compared: a pin that names no host a URL can have
/// would never apply, and the call would go out unpinned, so a declaration that is not a host name, an IPv4
/// address or an IPv6 address is refused (RFC 1123 §2.1 for names, RFC 4291 §2.2 for IPv6 text); an
/// address is compared by its value, whichever of its spellings (RFC 5952) a URL uses.
@Suite("Server trust: pinned host names and addresses", SuiteTimeLimit.oneMinute)
struct PinnedHostNameTests {
    @Test(
        "what is not a host name, an IPv4 or an IPv6 address is refused when declared",
        arguments: [
            // a port (any ':' used to pass as IPv6), and text that only looks like IPv6
            "api.example.com:8443", "host:443", "a:b", ":::", "1::2::3", "::1::", "1:2:3:4:5:6:7:8:9", "12345::1", "::g",
            "[::1", "::1]", "[api.example.com]", "[127.0.0.1]", "[::1]:443", "fe80::1%en0", "::ffff:1.2.3",
            // URLs, paths, wildcards, spaces, empty labels
            "http://host", "https://api.example.com", "host/path", "api.example.com/v1", "*.x", "*.example.com", "", " ", ".",
            "api example.com", " api.example.com", "api.example.com ", "api..example.com", ".example.com", "example.com..",
            // labels RFC 1123 does not allow: a hyphen at an end, longer than 63, a name longer than 253
            "-api.example.com", "api-.example.com", String(repeating: "a", count: 64) + ".example",
            Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: "."),
            // not ASCII (punycode it), and numbers that are no IPv4 address in any spelling
            "bücher.example", "256.0.0.1", "1.2.3.4.5", "4294967296", "08.0.0.1", "1.2.3.256",
        ])
    func invalidHostsAreRefused(host: String) {
        // GIVEN a host that is not one WHEN it is pinned THEN the declaration throws, naming it
        #expect(throws: PinningConfigurationError(host: host, problem: .invalidHostName)) {
            try PinnedHost.host(host, pins: [pinA, pinB])
        }
    }

    @Test(
        "names, IPv4 and IPv6 addresses are pinned in the form they are compared in",
        arguments: [
            ("example.com", "example.com"), ("EXAMPLE.com.", "example.com"), ("xn--bcher-kva.example", "xn--bcher-kva.example"),
            ("a-b.c1.example", "a-b.c1.example"), ("My_Host.internal", "my_host.internal"),
            // an IPv4 address in any spelling a resolver reads is the address it names, as a URL's host is
            ("127.1", "127.0.0.1"), ("127.0.0.01", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f.0.0.1", "127.0.0.1"),
            ("0x7f", "0.0.0.127"), ("1.2.3.0x4", "1.2.3.4"), ("localhost", "localhost"), ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0"),
            ("::1", "::1"), ("[::1]", "::1"), ("2001:db8::1", "2001:db8::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
            ("2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"), ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
            ("::", "::"), ("::ffff:192.0.2.1", "192.0.2.1"), ("[::FFFF:C000:0201]", "192.0.2.1"), ("::192.0.2.1", "::c000:201"),
            // RFC 5952 §4.2: the longest run is compressed, the first of equal runs, never a single zero group
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
            ("::1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7"), ("1::", "1::"), ("fe80::", "fe80::"),
            (String(repeating: "a", count: 63) + ".example", String(repeating: "a", count: 63) + ".example"),
        ])
    func validHostsArePinnedCanonically(host: String, compared: String) throws {
        // GIVEN a host name or an address, however it is spelled WHEN it is pinned
        // THEN it is kept as compared: a name in lowercase without its trailing dot; an IPv6 address in RFC 5952 §4
        // form (lowercase, no leading zeros, the longest run of zeros as "::"); an IPv4-mapped one as its IPv4
        #expect(try PinnedHost.host(host, pins: [pinA, pinB]).host == compared)
    }

    @Test(
        "a pinned IPv6 address covers every spelling of it a URL can have (RFC 5952)",
        arguments: [
            ("::1", "https://[0:0:0:0:0:0:0:1]/"), ("::1", "https://[0::1]/"), ("::1", "https://[::1]:8443/v1"),
            ("::1", "https://[0000:0000:0000:0000:0000:0000:0000:0001]/"), ("2001:db8::1", "https://[2001:DB8:0::0:1]/"),
            ("2001:db8:0:0:1::1", "https://[2001:db8::1:0:0:1]/"), ("::ffff:192.0.2.1", "https://[::ffff:c000:201]/"),
            ("::ffff:192.0.2.1", "https://[0:0:0:0:0:FFFF:192.0.2.1]/"), ("::ffff:192.0.2.1", "https://192.0.2.1/"),
            ("192.0.2.1", "https://[::ffff:192.0.2.1]/"), ("fe80::1", "https://[fe80::1%25en0]/"),
            // the IPv4 forms resolvers accept (inet_aton: fewer parts, octal, hex, one number), which libcurl connects to
            ("127.0.0.1", "https://127.1/"), ("127.0.0.1", "https://2130706433/"), ("127.0.0.1", "https://0x7f.0.0.1/"),
            ("127.0.0.1", "https://0177.0.0.01/"), ("127.0.0.1", "https://127.0.0.1./"),
            // any number of leading zeros, as strtoul reads them (a length limit on the digits must not count them)
            ("127.0.0.1", "https://0x000000000000000000000000000000007f.0.0.1/"),
            ("127.0.0.1", "https://" + String(repeating: "0", count: 40) + "177.0.0.1/"),
        ])
    func aPinnedAddressCoversItsSpellings(pinned: String, url: String) throws {
        // GIVEN pins on an address that cannot be enforced here
        let trust = try Self.unenforced(pinned)
        let target = try #require(URL(string: url))
        // WHEN a call goes to a URL naming that address in another spelling
        // THEN the address is recognised: the pins decide for it, and the call fails closed rather than go out unpinned
        #expect(trust.pinnedHost(for: try #require(target.host)) != nil)
        #expect(throws: NetworkError.self) { try trust.checkEnforceable(target) }
        // AND the session delegate's verdict on a challenge for it (with or without brackets) applies the pins
        for host in [try #require(target.host), "[\(try #require(target.host))]"] where host.contains(":") {
            #expect(trust.verdict(forHost: host, at: Date()) { (false, []) } != .performDefaultHandling)
        }
    }

    @Test(
        "other addresses and names are not covered by a pinned address",
        arguments: [
            ("::1", "https://[::2]/"), ("::1", "https://[1::]/"), ("::1", "https://127.0.0.1/"), ("2001:db8::1", "https://[2001:db8::1:0]/"),
            ("192.0.2.1", "https://192.0.2.10/"), ("192.0.2.1", "https://10.192.0.2.1/"), ("192.0.2.1", "https://[::192.0.2.1]/"),
        ])
    func otherAddressesAreNotCovered(pinned: String, url: String) throws {
        // GIVEN pins on an address WHEN another address is looked up THEN the pins do not cover it
        let target = try #require(URL(string: url))
        #expect(try Self.unenforced(pinned).pinnedHost(for: try #require(target.host)) == nil)
    }

    @Test func anAddressIsPinnedOnceWhateverItsSpelling() {
        // GIVEN the same address spelled two ways WHEN both are pinned THEN the second is a duplicate
        #expect(throws: PinningConfigurationError(host: "::1", problem: .duplicateHost)) {
            try ServerTrust(pinning: [.host("::1", pins: [pinA, pinB]), .host("[0:0::0:1]", pins: [pinA, pinB])])
        }
    }

    @Test(
        "an IP address has no subdomains: includingSubdomains pins the address alone",
        arguments: ["127.0.0.1", "::1", "[2001:db8::1]", "::ffff:192.0.2.1"])
    func anAddressWithSubdomainsPinsTheAddressAlone(host: String) throws {
        // GIVEN an address pinned with its "subdomains" (accepted as before: an app whose declaration threw would
        // be left with no pins at all if it wrote `try?`)
        let pinned = try PinnedHost.host(host, includingSubdomains: true, pins: [pinA, pinB])
        // THEN the address alone is pinned: no host is under an address
        #expect(!pinned.includesSubdomains)
        let trust = try ServerTrust(pinning: [pinned])
        #expect(trust.pinnedHost(for: host) != nil)
        #expect(trust.pinnedHost(for: "a." + pinned.host) == nil)
    }

    @Test func aDomainNeverCoversAnAddress() throws {
        // GIVEN a domain pinned with its subdomains, whose last labels look like the end of an address
        let trust = try ServerTrust(pinning: [.host("example.com", includingSubdomains: true, pins: [pinA, pinB])])
        // WHEN addresses are looked up THEN none is covered: suffix matching applies to names only
        for host in ["10.0.0.1", "::1", "[::ffff:10.0.0.1]"] {
            #expect(trust.pinnedHost(for: host) == nil)
        }
    }

    /// Pins on `host`, on a platform that cannot enforce them (as Linux), whatever this one is.
    static func unenforced(_ host: String) throws -> ServerTrust {
        var trust = try ServerTrust(pinning: [.host(host, pins: [pinA, pinB])])
        trust.enforcesPins = false
        return trust
    }
}
