import Foundation
import Testing

/// The files under `Fixtures/` (test resources): certificates made by openssl with the pins openssl
/// computed for them (`Fixtures/Certificates/make-certificates.sh`), and NIST's SHA-256 test vectors.
enum SecurityFixtures {
    /// Every certificate, by the name of its files: two chains (root → intermediate → leaves) covering RSA
    /// 2048, RSA 4096, EC P-256 and EC P-384, and a version 1 certificate.
    static let certificateNames = [
        "root-a", "intermediate-a", "leaf-a-rsa2048", "leaf-a-p256",
        "root-b", "intermediate-b", "leaf-b-rsa4096", "leaf-b-p384", "leaf-b-v1-p256",
    ]

    /// The fixtures folder in the test bundle.
    static func folder() throws -> URL {
        guard let folder = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Fixtures"])
        }
        return folder
    }

    /// The DER certificate `name`.
    static func certificate(_ name: String) throws -> Data {
        try Data(contentsOf: folder().appendingPathComponent("Certificates/\(name).der"))
    }

    /// The DER SubjectPublicKeyInfo of certificate `name`, as openssl wrote it.
    static func subjectPublicKeyInfo(_ name: String) throws -> Data {
        try Data(contentsOf: folder().appendingPathComponent("Certificates/\(name).spki.der"))
    }

    /// The pins openssl computed, by certificate name (`pins.txt`: one `name pin` a line).
    static func opensslPins() throws -> [String: String] {
        let text = try String(contentsOf: folder().appendingPathComponent("Certificates/pins.txt"), encoding: .utf8)
        var pins: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2 { pins[String(fields[0])] = String(fields[1]) }
        }
        return pins
    }

    /// The chain of a leaf, leaf first, as DER: what the system hands the delegate once it trusts it.
    static func chain(_ leaf: String) throws -> [Data] {
        let suffix = leaf.hasPrefix("leaf-a") ? "a" : "b"
        return try [certificate(leaf), certificate("intermediate-\(suffix)"), certificate("root-\(suffix)")]
    }

    /// One SHA-256 test vector of a NIST CAVP response file: the message and its digest, in hexadecimal.
    struct DigestVector: Sendable, CustomTestStringConvertible {
        let bits: Int
        let message: [UInt8]
        let digest: String
        var testDescription: String { "Len = \(bits)" }
    }

    /// The vectors of `file` (`SHA256ShortMsg.rsp`, `SHA256LongMsg.rsp`), in the CAVP format: `Len = bits`,
    /// `Msg = hex` (`00` for the empty message), `MD = hex`.
    static func digestVectors(_ file: String) throws -> [DigestVector] {
        let text = try String(contentsOf: folder().appendingPathComponent("SHA256/\(file)"), encoding: .utf8)
        var vectors: [DigestVector] = []
        var bits: Int?
        var message: [UInt8]?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "Len": bits = Int(parts[1])
            case "Msg": message = bytes(fromHex: parts[1])
            case "MD":
                if let length = bits, let message {
                    vectors.append(DigestVector(bits: length, message: Array(message.prefix(length / 8)), digest: parts[1]))
                }
                (bits, message) = (nil, nil)
            default: continue
            }
        }
        return vectors
    }

    /// The bytes of hexadecimal `text`, or `nil` if it is not hexadecimal of whole bytes.
    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// A seeded generator (SplitMix64), so a fuzz run that finds something can be run again as it was.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
