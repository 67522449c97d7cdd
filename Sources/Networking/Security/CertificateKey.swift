import Foundation

/// A certificate's public key as pins name it: its SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), read from
/// the certificate's DER, and the pin of that key — the base64 of its SHA-256, as HPKP (RFC 7469) and
/// TrustKit write pins, and as `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst
/// -sha256 -binary | base64` prints them.
///
/// The certificate is read only as far as its key, and only its structure is checked (one certificate,
/// nothing after it; the fields before the key of the right kinds; a key made of an algorithm and a bit
/// string): whether the certificate is valid, trusted or signed by anyone is the system's evaluation, which
/// runs first. Malformed or truncated input gives `nil`, never a trap.
///
/// The digest is the package's own ``SHA256`` on every platform, CryptoKit included: one implementation,
/// proven here against NIST's test vectors, rather than a second one that only runs where CI cannot look.
enum CertificateKey {
    /// The DER SubjectPublicKeyInfo (tag and length included) of the DER certificate `certificate`.
    static func subjectPublicKeyInfo(of certificate: [UInt8]) -> ArraySlice<UInt8>? {
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
        var outer = DERReader(certificate)
        guard let whole = outer.read(tag: DERReader.sequence), outer.isAtEnd else { return nil }
        var fields = DERReader(certificate, in: whole.content)
        guard let toBeSigned = fields.read(tag: DERReader.sequence), fields.read(tag: DERReader.sequence) != nil,
            fields.read(tag: DERReader.bitString) != nil, fields.isAtEnd
        else { return nil }
        // TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity,
        //                               subject, subjectPublicKeyInfo, ... }
        var tbs = DERReader(certificate, in: toBeSigned.content)
        if tbs.nextTag == DERReader.contextZero { _ = tbs.read(tag: DERReader.contextZero) }   // absent in version 1
        guard tbs.read(tag: DERReader.integer) != nil else { return nil }
        for _ in 0..<4 {   // signature, issuer, validity, subject
            guard tbs.read(tag: DERReader.sequence) != nil else { return nil }
        }
        guard let key = tbs.read(tag: DERReader.sequence) else { return nil }
        // SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }
        var parts = DERReader(certificate, in: key.content)
        guard let algorithm = parts.read(tag: DERReader.sequence), parts.read(tag: DERReader.bitString) != nil, parts.isAtEnd else {
            return nil
        }
        var identifier = DERReader(certificate, in: algorithm.content)
        guard identifier.read(tag: DERReader.objectIdentifier) != nil else { return nil }
        return tbs.slice(key.whole)
    }

    /// The pin of the key of `certificate` (DER, or the first certificate of a PEM text), or `nil` when it is
    /// not a certificate.
    static func pin(ofCertificate certificate: Data) -> String? {
        let bytes = [UInt8](certificate)
        guard let key = subjectPublicKeyInfo(of: der(fromPEM: bytes) ?? bytes) else { return nil }
        return pin(ofSubjectPublicKeyInfo: key)
    }

    /// The pin of a DER SubjectPublicKeyInfo: the base64 of its SHA-256.
    static func pin(ofSubjectPublicKeyInfo key: some Collection<UInt8>) -> String {
        Data(SHA256.digest(key)).base64EncodedString()
    }

    private static let pemBegin = Array("-----BEGIN CERTIFICATE-----".utf8)
    private static let pemEnd = Array("-----END CERTIFICATE-----".utf8)

    /// The DER of the first certificate in `pem` (`-----BEGIN CERTIFICATE-----` … `-----END CERTIFICATE-----`),
    /// or `nil` when there is none. (Bytes, not a `String`: a DER input is searched quickly and never decoded.)
    private static func der(fromPEM pem: [UInt8]) -> [UInt8]? {
        guard let begin = firstIndex(of: pemBegin, in: pem, from: 0),
            let end = firstIndex(of: pemEnd, in: pem, from: begin + pemBegin.count)
        else { return nil }
        let body = pem[(begin + pemBegin.count)..<end].filter { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains($0) }
        return Data(base64Encoded: Data(body)).map { [UInt8]($0) }
    }

    /// Where `marker` first occurs in `bytes` at or after `start`.
    private static func firstIndex(of marker: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = marker.first, start >= 0, bytes.count - marker.count >= start else { return nil }
        for index in start...(bytes.count - marker.count) where bytes[index] == first {
            if bytes[index..<(index + marker.count)].elementsEqual(marker) { return index }
        }
        return nil
    }
}
