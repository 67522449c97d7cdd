import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two valid pins for policies whose pins do not matter to the test.
let pinA = "cUPcTAZWKaASuYWhhneDttWpY3oBAkE3h2+soZS7sWs="
let pinB = "M8HztCzM3elUxkcjR2S5P4hhyBNf6lHkmjAHKhpGPWE="

/// The policy: declaring pins, which host they cover and when, and the verdict on a chain — all the
/// decisions, in plain Swift, that the Apple glue only feeds.
@Suite("Server trust: policy and verdict", SuiteTimeLimit.oneMinute)
struct ServerTrustPolicyTests {
    // MARK: Declaring pins

    @Test func aHostNeedsTwoDifferentPinsUnlessWaived() throws {
        // GIVEN one pin, the same pin twice, or one pin with the rule waived
        // WHEN they are declared THEN the first two fail saying a backup is missing; the waiver is taken
        #expect(throws: PinningConfigurationError(host: "api.example.com", problem: .missingBackupPin)) {
            try PinnedHost.host("api.example.com", pins: [pinA])
        }
        #expect(throws: PinningConfigurationError(host: "api.example.com", problem: .missingBackupPin)) {
            try PinnedHost.host("api.example.com", pins: [pinA, "sha256/" + pinA])
        }
        #expect(throws: PinningConfigurationError(host: "api.example.com", problem: .missingBackupPin)) {
            try PinnedHost.host("api.example.com", pins: [], requiresBackupPin: false)
        }
        #expect(try PinnedHost.host("api.example.com", pins: [pinA], requiresBackupPin: false).pins == [pinA])
        #expect(try PinnedHost.host("api.example.com", pins: [pinA, pinB]).pins == [pinA, pinB])
    }

    @Test func pinsMustBeBase64SHA256Digests() throws {
        // GIVEN pins that are hex, too short, not base64, or a digest of another size
        let invalid = [
            "9d1d6b6b4e7b5c8a9d1d6b6b4e7b5c8a9d1d6b6b4e7b5c8a9d1d6b6b4e7b5c8a", String(pinA.dropLast(4)), "not base64 at all!",
            Data(repeating: 1, count: 20).base64EncodedString(), "sha1/" + pinA,
        ]
        // WHEN they are declared THEN each is refused by name
        for pin in invalid {
            #expect(throws: PinningConfigurationError(host: "api.example.com", problem: .invalidPin(pin))) {
                try PinnedHost.host("api.example.com", pins: [pin, pinB])
            }
        }
        // AND OkHttp's `sha256/` prefix is accepted, and stored without it
        #expect(try PinnedHost.host("api.example.com", pins: ["sha256/" + pinA, pinB]).pins == [pinA, pinB])
    }

    @Test func hostNamesAreHostNames() throws {
        // GIVEN things that are not ASCII host names
        for host in ["", ".", "*.example.com", "https://api.example.com", "api..example.com", ".example.com", "bücher.example", "api.example.com/v1"] {
            // WHEN they are pinned THEN they are refused
            #expect(throws: PinningConfigurationError(host: host, problem: .invalidHostName)) {
                try PinnedHost.host(host, pins: [pinA, pinB])
            }
        }
        // AND a name is kept as compared: lowercase, without its trailing dot
        #expect(try PinnedHost.host("API.Example.COM.", pins: [pinA, pinB]).host == "api.example.com")
        #expect(try PinnedHost.host("xn--bcher-kva.example", pins: [pinA, pinB]).host == "xn--bcher-kva.example")
    }

    @Test func aHostIsPinnedOnce() throws {
        // GIVEN the same host twice (spelled differently), and a host with its domain
        // WHEN they make one policy THEN the duplicate is refused, the pair is not
        #expect(throws: PinningConfigurationError(host: "api.example.com", problem: .duplicateHost)) {
            try ServerTrust(pinning: [.host("api.example.com", pins: [pinA, pinB]), .host("API.example.com.", pins: [pinA, pinB])])
        }
        let trust = try ServerTrust(pinning: [
            .host("api.example.com", pins: [pinA, pinB]), .host("api.example.com", includingSubdomains: true, pins: [pinA, pinB]),
        ])
        #expect(trust.pinnedHosts.count == 2)
    }

    @Test func theErrorSaysWhatToDo() {
        // GIVEN a configuration error WHEN it is shown THEN it names the host and the fix
        let error = PinningConfigurationError(host: "api.example.com", problem: .missingBackupPin)
        #expect("\(error)".contains("\"api.example.com\""))
        #expect("\(error)".contains("backup key"))
    }

    // MARK: Which host a policy covers

    @Test(
        "host matching: exact, subdomains, case, trailing dot, punycode",
        arguments: [
            ("api.example.com", false, "api.example.com", true),
            ("api.example.com", false, "API.EXAMPLE.COM", true),
            ("api.example.com", false, "api.example.com.", true),
            ("api.example.com", false, "www.api.example.com", false),
            ("api.example.com", false, "example.com", false),
            ("example.com", true, "example.com", true),
            ("example.com", true, "a.b.example.com", true),
            ("example.com", true, "A.B.Example.Com.", true),
            ("example.com", true, "badexample.com", false),
            ("example.com", true, "example.com.evil.net", false),
            ("example.com", true, "xample.com", false),
            ("xn--bcher-kva.example", false, "XN--BCHER-KVA.EXAMPLE", true),
            ("xn--bcher-kva.example", true, "shop.xn--bcher-kva.example", true),
            ("xn--bcher-kva.example", false, "bücher.example", false),
        ])
    func hostMatching(pinned: String, subdomains: Bool, host: String, covered: Bool) throws {
        // GIVEN a policy for `pinned` WHEN a host is looked up THEN it is covered exactly as the rules say
        let trust = try ServerTrust(pinning: [.host(pinned, includingSubdomains: subdomains, pins: [pinA, pinB])])
        #expect((trust.pinnedHost(for: host) != nil) == covered)
    }

    @Test func theMostSpecificPolicyDecides() throws {
        // GIVEN a domain, a subdomain of it, and an exact host of the same name as the subdomain
        let trust = try ServerTrust(pinning: [
            .host("example.com", includingSubdomains: true, pins: [pinA, pinB]),
            .host("api.example.com", includingSubdomains: true, pins: [pinB, pinA]),
            .host("api.example.com", pins: [pinA, pinB], reportOnly: true),
        ])
        // WHEN hosts are looked up THEN the longest name wins, and the exact host over its domain
        #expect(trust.pinnedHost(for: "www.example.com")?.host == "example.com")
        #expect(trust.pinnedHost(for: "v2.api.example.com")?.pins == [pinB, pinA])
        #expect(trust.pinnedHost(for: "api.example.com")?.isReportOnly == true)
        #expect(trust.pinnedHost(for: "example.org") == nil)
    }

    // MARK: The verdict

    /// A policy pinning `host` to the key of `certificate` (and a backup).
    static func trust(_ host: String = "api.example.com", pinning certificate: String, expires: Date? = nil, reportOnly: Bool = false) throws -> ServerTrust {
        let pin = try #require(try SecurityFixtures.opensslPins()[certificate])
        return try ServerTrust(pinning: [.host(host, pins: [pin, pinB], expires: expires, reportOnly: reportOnly)])
    }

    @Test("a trusted chain with a pinned key anywhere in it is accepted", arguments: ["leaf-a-rsa2048", "intermediate-a", "root-a"])
    func pinnedKeyAnywhereInTheChain(certificate: String) throws {
        // GIVEN pins on one certificate of the chain (leaf, intermediate or root) that the system trusts
        let trust = try Self.trust(pinning: certificate)
        let chain = try SecurityFixtures.chain("leaf-a-rsa2048")
        // WHEN the chain is judged THEN it is accepted
        let verdict = trust.verdict(forHost: "api.example.com", at: Date()) { (true, chain) }
        #expect(verdict == .accept)
    }

    @Test func aTrustedChainWithoutThePinsIsRefusedNamingTheHost() throws {
        // GIVEN pins on chain B's intermediate, and a server presenting chain A (a trusted chain all the same)
        let trust = try Self.trust(pinning: "intermediate-b")
        let pins = try SecurityFixtures.opensslPins()
        let chain = try SecurityFixtures.chain("leaf-a-p256")
        // WHEN the chain is judged
        let verdict = trust.verdict(forHost: "API.example.com.", at: Date()) { (true, chain) }
        // THEN it is refused with an error naming the host, and the mismatch names the keys by their pins only
        let mismatch = PinMismatch(
            host: "api.example.com", presentedPins: [pins["leaf-a-p256"], pins["intermediate-a"], pins["root-a"]].compactMap { $0 },
            expectedPins: [pins["intermediate-b"], pinB].compactMap { $0 }, isReportOnly: false)
        #expect(verdict == .reject(.pinMismatch(host: "api.example.com"), mismatch: mismatch))
        #expect("\(mismatch)".contains(try #require(pins["leaf-a-p256"])))
        #expect(!"\(mismatch)".contains("cdn.example.com") && !"\(mismatch)".contains("Networking Tests"))
    }

    @Test func anUntrustedChainFailsWhateverThePins() throws {
        // GIVEN pins that the chain has, but a chain the system does not trust
        let trust = try Self.trust(pinning: "leaf-a-rsa2048")
        var evaluated = false
        // WHEN it is judged THEN it is refused as untrusted; no pin can rescue it
        let verdict = trust.verdict(forHost: "api.example.com", at: Date()) {
            evaluated = true
            return (false, [])
        }
        #expect(evaluated)
        #expect(verdict == .reject(.transportFailed(URLError(.serverCertificateUntrusted)), mismatch: nil))
    }

    @Test func reportOnlyLetsAMismatchThroughAndReportsIt() throws {
        // GIVEN report-only pins the chain does not have
        let trust = try Self.trust(pinning: "root-b", reportOnly: true)
        let (chainA, chainB) = (try SecurityFixtures.chain("leaf-a-rsa2048"), try SecurityFixtures.chain("leaf-b-p384"))
        // WHEN a trusted chain without them is judged THEN it is accepted, with a report
        let verdict = trust.verdict(forHost: "api.example.com", at: Date()) { (true, chainA) }
        guard case .acceptReporting(let mismatch) = verdict else {
            Issue.record("expected acceptReporting, got \(verdict)")
            return
        }
        #expect(mismatch.isReportOnly && mismatch.host == "api.example.com" && mismatch.presentedPins.count == 3)
        // AND an untrusted chain gets the system's own answer, as without pins
        #expect(trust.verdict(forHost: "api.example.com", at: Date()) { (false, []) } == .performDefaultHandling)
        // AND a matching chain is accepted without a report
        #expect(trust.verdict(forHost: "api.example.com", at: Date()) { (true, chainB) } == .accept)
    }

    @Test func expiredPinsNoLongerApply() throws {
        // GIVEN pins that expire at a date, and a chain without them
        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        let trust = try Self.trust(pinning: "root-b", expires: expiry)
        let chain = try SecurityFixtures.chain("leaf-a-rsa2048")
        // WHEN the chain is judged before, at, and after that date
        let before = trust.verdict(forHost: "api.example.com", at: expiry.addingTimeInterval(-1)) { (true, chain) }
        var evaluatedAfter = false
        let at = trust.verdict(forHost: "api.example.com", at: expiry) { (true, chain) }
        let after = trust.verdict(forHost: "api.example.com", at: expiry.addingTimeInterval(86_400)) {
            evaluatedAfter = true
            return (true, chain)
        }
        // THEN the pins refuse it until then, and from then on the system alone decides (not even asked here)
        let mismatch = try #require(before.mismatch)
        #expect(before == .reject(.pinMismatch(host: "api.example.com"), mismatch: mismatch))
        #expect(at == .performDefaultHandling && after == .performDefaultHandling)
        #expect(!evaluatedAfter)
        #expect(trust.pinnedHosts[0].isInForce(at: expiry.addingTimeInterval(-1)) && !trust.pinnedHosts[0].isInForce(at: expiry))
    }

    @Test func anExpiredSpecificPolicyDoesNotFallBackToItsDomain() throws {
        // GIVEN an exact host whose pins expired, under a domain whose pins have not (and do not match)
        let expired = Date(timeIntervalSince1970: 1_000_000_000)
        let trust = try ServerTrust(pinning: [
            .host("example.com", includingSubdomains: true, pins: [pinA, pinB]),
            .host("api.example.com", pins: [pinA, pinB], expires: expired),
        ])
        // WHEN the host is judged THEN its own expired policy decides: the system's evaluation alone
        #expect(trust.verdict(forHost: "api.example.com", at: Date()) { (true, []) } == .performDefaultHandling)
        #expect(trust.verdict(forHost: "www.example.com", at: Date()) { (true, []) } != .performDefaultHandling)
    }

    @Test func hostsWithoutPinsKeepTheDefaultHandlingUnevaluated() throws {
        // GIVEN pins for one host
        let trust = try Self.trust(pinning: "leaf-a-rsa2048")
        // WHEN another host, or any host of a provider without pins, is judged
        // THEN URLSession's default handling applies, and the chain is not even evaluated
        for (policy, host) in [(trust, "cdn.example.com"), (trust, "example.com"), (ServerTrust.default, "api.example.com")] {
            let verdict = policy.verdict(forHost: host, at: Date()) {
                Issue.record("evaluated \(host)")
                return (true, [])
            }
            #expect(verdict == .performDefaultHandling)
        }
    }

    @Test func aChainOfGarbageMatchesNothing() throws {
        // GIVEN a trusted "chain" whose certificates cannot be read
        let trust = try Self.trust(pinning: "leaf-a-rsa2048")
        let garbage = [Data([0x30, 0x03, 0x02, 0x01]), Data(), Data(repeating: 0xFF, count: 300)]
        // WHEN it is judged THEN it is refused: an unreadable key is no pinned key
        let verdict = trust.verdict(forHost: "api.example.com", at: Date()) { (true, garbage) }
        #expect(verdict.mismatch?.presentedPins == [])
        #expect(verdict == .reject(.pinMismatch(host: "api.example.com"), mismatch: verdict.mismatch))
    }
}

extension ServerTrustVerdict {
    /// The mismatch a verdict carries, if any.
    var mismatch: PinMismatch? {
        switch self {
        case .acceptReporting(let mismatch): return mismatch
        case .reject(_, let mismatch): return mismatch
        case .accept, .performDefaultHandling: return nil
        }
    }
}
