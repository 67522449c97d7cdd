import Foundation
import Testing

@testable import Networking

/// Reading a certificate's public key and its pin, compared with what openssl computed for the committed
/// fixtures (`Fixtures/Certificates/make-certificates.sh`): a third party, not our own output.
@Suite("Server trust: certificate keys and pins", SuiteTimeLimit.oneMinute)
struct CertificatePinTests {
    @Test("the SubjectPublicKeyInfo read is byte for byte openssl's", arguments: SecurityFixtures.certificateNames)
    func subjectPublicKeyInfoIsOpenSSLs(name: String) throws {
        // GIVEN a certificate openssl made (RSA 2048/4096, EC P-256/P-384; root, intermediate, leaf, version 1)
        let certificate = try SecurityFixtures.certificate(name)
        // WHEN its key is read
        let key = try #require(CertificateKey.subjectPublicKeyInfo(of: [UInt8](certificate)))
        // THEN it is exactly the DER openssl wrote for that key
        #expect(Data(key) == (try SecurityFixtures.subjectPublicKeyInfo(name)))
    }

    @Test("the pin is openssl's", arguments: SecurityFixtures.certificateNames)
    func pinIsOpenSSLs(name: String) throws {
        // GIVEN a certificate and the pin openssl printed for it
        let expected = try #require(try SecurityFixtures.opensslPins()[name])
        // WHEN the app computes the pin
        let pin = ServerTrust.publicKeyPin(ofCertificate: try SecurityFixtures.certificate(name))
        // THEN it is the same 44-character base64 value
        #expect(pin == expected)
        #expect(pin?.count == 44)
    }

    @Test func everyFixtureHasItsOwnPin() throws {
        // GIVEN the fixtures WHEN their pins are read THEN there is one per certificate, and no two are alike
        let pins = try SecurityFixtures.opensslPins()
        #expect(Set(pins.keys) == Set(SecurityFixtures.certificateNames))
        #expect(Set(pins.values).count == pins.count)
    }

    @Test func aPEMCertificateGivesThePinOfItsDER() throws {
        // GIVEN a certificate as PEM, with the text openssl puts before it, and a second certificate after it
        let der = try SecurityFixtures.certificate("leaf-a-p256")
        let lines = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let pem = "subject=O = Networking Tests, CN = cdn.example.com\n-----BEGIN CERTIFICATE-----\n\(lines)\n-----END CERTIFICATE-----\n"
        let bundle = pem + pem.replacingOccurrences(of: lines, with: try SecurityFixtures.certificate("root-a").base64EncodedString())
        // WHEN its pin is computed THEN it is the first certificate's, as from its DER
        let expected = try SecurityFixtures.opensslPins()["leaf-a-p256"]
        #expect(ServerTrust.publicKeyPin(ofCertificate: Data(pem.utf8)) == expected)
        #expect(ServerTrust.publicKeyPin(ofCertificate: Data(bundle.utf8)) == expected)
    }

    @Test func whatIsNotOneCertificateHasNoPin() throws {
        // GIVEN inputs that are not exactly one DER certificate
        let certificate = try SecurityFixtures.certificate("leaf-a-rsa2048")
        let notCertificates: [(String, Data)] = [
            ("nothing", Data()),
            ("a public key alone", try SecurityFixtures.subjectPublicKeyInfo("leaf-a-rsa2048")),
            ("a certificate with a byte after it", certificate + Data([0])),
            ("two certificates", certificate + certificate),
            ("text", Data("hello, world".utf8)),
            ("a PEM block that is not base64", Data("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----".utf8)),
            ("a PEM block with no end", Data("-----BEGIN CERTIFICATE-----\n\(certificate.base64EncodedString())".utf8)),
        ]
        // WHEN their pins are asked for THEN there are none
        for (label, data) in notCertificates {
            #expect(ServerTrust.publicKeyPin(ofCertificate: data) == nil, "\(label)")
        }
    }

    @Test func derLengthsAreOnlyWhatDERAllows() {
        // GIVEN elements whose lengths BER allows but DER does not, or that lie
        let cases: [(String, [UInt8])] = [
            ("indefinite length", [0x30, 0x80, 0x02, 0x01, 0x00, 0x00, 0x00]),
            ("long form for a short length", [0x30, 0x81, 0x03, 0x02, 0x01, 0x00]),
            ("a length with a leading zero byte", [0x30, 0x82, 0x00, 0x83] + [UInt8](repeating: 0, count: 0x83)),
            ("four length bytes", [0x30, 0x84, 0x00, 0x00, 0x00, 0x01, 0x00]),
            ("a length past the end", [0x30, 0x83, 0xFF, 0xFF, 0xFF, 0x00]),
            ("a high tag number", [0x1F, 0x01, 0x00]),
            ("a tag alone", [0x30]),
        ]
        // WHEN a reader reads them THEN none is read, and nothing traps
        for (label, bytes) in cases {
            var reader = DERReader(bytes)
            #expect(reader.read(tag: bytes[0]) == nil, "\(label)")
        }
        // AND a well-formed one is read to its end
        var reader = DERReader([0x30, 0x81, 0x80] + [UInt8](repeating: 0x05, count: 0x80))
        #expect(reader.read(tag: DERReader.sequence)?.content == 3..<0x83)
        #expect(reader.isAtEnd)
    }
}
