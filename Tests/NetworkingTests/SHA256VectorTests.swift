import Foundation
import Networking
import Testing

/// The package's SHA-256 against published, third-party answers: NIST's CAVP byte-oriented test vectors
/// (SHAVS ShortMsg: all 65; LongMsg: the first eight) and the FIPS 180-2 examples, the million-`a` one
/// included. Pins and the response cache's keys are this digest on every platform.
@Suite("SHA-256: NIST test vectors", SuiteTimeLimit.oneMinute)
struct SHA256VectorTests {
    @Test("SHA256ShortMsg.rsp: every message from 0 to 64 bytes", arguments: try SecurityFixtures.digestVectors("SHA256ShortMsg.rsp"))
    func shortMessages(vector: SecurityFixtures.DigestVector) {
        // GIVEN a NIST short message WHEN it is digested THEN the digest is NIST's
        #expect(SHA256.hex(SHA256.digest(vector.message)) == vector.digest)
    }

    @Test("SHA256LongMsg.rsp: messages of 163 to 856 bytes", arguments: try SecurityFixtures.digestVectors("SHA256LongMsg.rsp"))
    func longMessages(vector: SecurityFixtures.DigestVector) {
        // GIVEN a NIST long message (several blocks) WHEN it is digested THEN the digest is NIST's
        #expect(vector.message.count == vector.bits / 8)
        #expect(SHA256.hex(SHA256.digest(vector.message)) == vector.digest)
    }

    @Test func theFilesHoldEveryVectorTheyShould() throws {
        // GIVEN the committed response files WHEN they are read THEN no entry was lost on the way
        let short = try SecurityFixtures.digestVectors("SHA256ShortMsg.rsp")
        #expect(short.map(\.bits) == Array(stride(from: 0, through: 512, by: 8)))
        #expect(try SecurityFixtures.digestVectors("SHA256LongMsg.rsp").count == 8)
    }

    @Test func fipsExamplesIncludingAMillionAs() {
        // GIVEN the FIPS 180-2 examples WHEN they are digested THEN the digests are the published ones
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex(SHA256.digest(repeatElement(UInt8(ascii: "a"), count: 1_000_000))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
