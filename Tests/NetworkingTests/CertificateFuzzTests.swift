import Foundation
import Testing

@testable import Networking

/// A certificate is what a server (or whoever sits between) sends: reading one must end in a key or
/// `nil`, never in a trap, whatever the bytes. Seeded, so a failure can be replayed.
@Suite("Server trust: malformed certificates never trap", SuiteTimeLimit.oneMinute)
struct CertificateFuzzTests {
    @Test("every truncation of every fixture is no certificate", arguments: SecurityFixtures.certificateNames)
    func truncations(name: String) throws {
        // GIVEN a certificate cut at every length, and the same length taken from its end
        let certificate = [UInt8](try SecurityFixtures.certificate(name))
        for length in 0..<certificate.count {
            // WHEN its key is read THEN there is none (the outer length claims more than there is)
            #expect(CertificateKey.subjectPublicKeyInfo(of: Array(certificate.prefix(length))) == nil, "prefix \(length)")
            #expect(CertificateKey.subjectPublicKeyInfo(of: Array(certificate.suffix(length))) == nil, "suffix \(length)")
        }
    }

    @Test("random changes to every fixture end in a key or nil", arguments: SecurityFixtures.certificateNames.indices)
    func mutations(index: Int) throws {
        // GIVEN a certificate with random bytes changed, inserted or removed (1,000 variants a certificate)
        let name = SecurityFixtures.certificateNames[index]
        let certificate = [UInt8](try SecurityFixtures.certificate(name))
        var random = SeededGenerator(seed: 0x5EED_0000 + UInt64(index))
        var read = 0
        for _ in 0..<1_000 {
            var bytes = certificate
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                case 1: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            // WHEN its key is read
            guard let key = CertificateKey.subjectPublicKeyInfo(of: bytes) else { continue }
            // THEN a key that is read lies within the input and is itself one well-formed element
            read += 1
            #expect(key.startIndex >= 0 && key.endIndex <= bytes.count)
            var reader = DERReader(Array(key))
            #expect(reader.read(tag: DERReader.sequence) != nil && reader.isAtEnd)
        }
        // AND changes in the signature or in names leave a readable key, so the reading was exercised both ways
        #expect(read > 0)
    }

    @Test func randomBytesAreNoCertificate() {
        // GIVEN 5,000 random inputs of up to 2 KiB, half of them starting like a certificate
        var random = SeededGenerator(seed: 0xC0FF_EE00)
        for round in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...256, using: &random) {
                withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) }
            }
            if round.isMultiple(of: 2), bytes.count > 8 {
                bytes.replaceSubrange(0..<4, with: [0x30, 0x82, UInt8((bytes.count - 4) >> 8), UInt8((bytes.count - 4) & 0xFF)])
            }
            // WHEN their keys and pins are read THEN nothing traps
            _ = CertificateKey.subjectPublicKeyInfo(of: bytes)
            _ = ServerTrust.publicKeyPin(ofCertificate: Data(bytes))
        }
    }

    @Test func hostileNestingIsRejectedNotFollowed() {
        // GIVEN a certificate whose every layer claims the largest lengths DER allows, nested deep
        var bytes: [UInt8] = []
        for _ in 0..<1_000 { bytes += [0x30, 0x83, 0xFF, 0xFF, 0xFF] }
        // WHEN its key is read THEN it is none, at once (no layer is entered whose length is not there)
        #expect(CertificateKey.subjectPublicKeyInfo(of: bytes) == nil)
        #expect(ServerTrust.publicKeyPin(ofCertificate: Data(bytes)) == nil)
    }
}
