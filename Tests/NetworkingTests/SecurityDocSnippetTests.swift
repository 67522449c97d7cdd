// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Security.md, and of the Server trust section of Docs/MigratingFromAlamofire.md:
// keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

func securityDocProvider() throws -> NetworkProvider {
let trust = try ServerTrust(pinning: [
    .host("api.example.com", pins: [
        "cUPcTAZWKaASuYWhhneDttWpY3oBAkE3h2+soZS7sWs=",   // the key api.example.com uses today
        "M8HztCzM3elUxkcjR2S5P4hhyBNf6lHkmjAHKhpGPWE=",   // a backup key, kept offline, not deployed yet
    ], expires: Date(timeIntervalSince1970: 1_830_297_600)),   // 1 January 2028: ship an update before then
])
let provider = NetworkProvider(serverTrust: trust)
    return provider
}

func pins(ofCertificatesAt files: [URL]) throws -> [String] {
    try files.compactMap { ServerTrust.publicKeyPin(ofCertificate: try Data(contentsOf: $0)) }
}

func rolloutTrust(intermediatePin: String, backupPin: String) throws -> ServerTrust {
let rollout = try ServerTrust(pinning: [
    .host("example.com", includingSubdomains: true, pins: [intermediatePin, backupPin], reportOnly: true),
])
    return rollout
}

struct PinReporter: EventMonitor {
    let report: @Sendable (PinMismatch) -> Void
    func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext) {
        report(mismatch)   // the host and the keys' pins: nothing secret, safe to send to your backend
    }
}

/// The page's `do`/`catch`, returning what it printed.
func describePinFailure(of endpoint: some Endpoint, through provider: NetworkProvider) async throws -> String {
    var printed = ""
    func print(_ text: String) { printed = text }
do {
    _ = try await provider.response(endpoint)
} catch NetworkError.pinMismatch(let host) {
    print("\(host) presented a key we did not pin: the connection may be intercepted")
} catch NetworkError.unenforceablePins(let host) {
    print("not sent: \(host)'s pins cannot be checked here")
}
    return printed
}

func linuxServerTrust(pinnedAPI: PinnedHost) throws -> ServerTrust {
let linuxTrust = try ServerTrust(pinning: [pinnedAPI], allowsUnenforcedPinning: true)   // sent unpinned where pins cannot be checked
    return linuxTrust
}

// Docs/MigratingFromAlamofire.md, Server trust
func makePinnedProvider(apiPins: [String], cdnCertificates: [URL]) throws -> NetworkProvider {
    let cdnPins = try cdnCertificates.compactMap { ServerTrust.publicKeyPin(ofCertificate: try Data(contentsOf: $0)) }
    let trust = try ServerTrust(pinning: [
        .host("api.example.com", pins: apiPins),
        .host("cdn.example.com", includingSubdomains: true, pins: cdnPins),
    ])
    return NetworkProvider(serverTrust: trust)
}

@Suite("Docs/Security.md snippets", SuiteTimeLimit.oneMinute)
struct SecurityDocSnippetTests {
    @Test func thePinnedProviderPinsTheAPIUntilItsExpiry() throws {
        let provider = try securityDocProvider()
        let api = try #require(provider.serverTrust.pinnedHost(for: "api.example.com"))
        #expect(api.pins.count == 2 && !api.isReportOnly && !api.includesSubdomains)
        #expect(api.expires == Date(timeIntervalSince1970: 1_830_297_600))
        #expect(provider.serverTrust.pinnedHost(for: "www.api.example.com") == nil)
    }

    @Test func pinsOfCertificateFilesAreOpenSSLs() throws {
        let folder = try SecurityFixtures.folder().appendingPathComponent("Certificates")
        let files = ["leaf-a-rsa2048", "intermediate-a"].map { folder.appendingPathComponent("\($0).der") }
        let expected = try SecurityFixtures.opensslPins()
        #expect(try pins(ofCertificatesAt: files) == [expected["leaf-a-rsa2048"], expected["intermediate-a"]].compactMap { $0 })
    }

    @Test func theRolloutReportsAndTheReporterSendsTheMismatch() throws {
        let rollout = try rolloutTrust(intermediatePin: pinA, backupPin: pinB)
        #expect(rollout.pinnedHost(for: "shop.example.com")?.isReportOnly == true)
        let sent = Recorder<PinMismatch>()
        let mismatch = PinMismatch(host: "shop.example.com", presentedPins: [pinB], expectedPins: [pinA], isReportOnly: true)
        PinReporter(report: { sent.append($0) }).pinValidationDidFail(mismatch, context: RequestContext(endpoint: TestEndpoint()))
        #expect(sent.all == [mismatch])
    }

    @Test func theCatchClausesNameTheHostAndTheOptInSends() async throws {
        let server = MockServer()
        server.stub { _ in .json(raw: "{}") }
        let api = try PinnedHost.host("api.example.com", pins: [pinA, pinB])
        var unenforced = try ServerTrust(pinning: [api])
        unenforced.enforcesPins = false   // what Linux does, on every platform
        let failing = NetworkProvider(configuration: server.makeConfiguration(), interceptor: ServerRouter(server: server), serverTrust: unenforced)
        #expect(try await describePinFailure(of: TestEndpoint(), through: failing) == "not sent: api.example.com's pins cannot be checked here")
        var optedIn = try linuxServerTrust(pinnedAPI: api)
        optedIn.enforcesPins = false
        let sending = NetworkProvider(configuration: server.makeConfiguration(), interceptor: ServerRouter(server: server), serverTrust: optedIn)
        #expect(try await describePinFailure(of: TestEndpoint(), through: sending) == "")
        #expect(server.requests.count == 1)
    }

    @Test func theMigratedManagerPinsBothHosts() throws {
        let folder = try SecurityFixtures.folder().appendingPathComponent("Certificates")
        let provider = try makePinnedProvider(apiPins: [pinA, pinB], cdnCertificates: [folder.appendingPathComponent("leaf-a-p256.der"), folder.appendingPathComponent("root-a.der")])
        let expected = try SecurityFixtures.opensslPins()
        #expect(provider.serverTrust.pinnedHost(for: "api.example.com")?.pins == [pinA, pinB])
        #expect(provider.serverTrust.pinnedHost(for: "img.cdn.example.com")?.pins == [expected["leaf-a-p256"], expected["root-a"]].compactMap { $0 })
    }
}
