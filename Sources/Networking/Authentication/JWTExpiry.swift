import Foundation

/// Reads the `exp` claim of an access token that is a JWT, as a hint for when to refresh it.
///
/// The token is not verified (only the server can do that) and the claim is used for nothing but
/// timing. Anything that is not a three-part JWS with a base64url JSON payload holding a numeric `exp`
/// gives `nil`: the token is then treated as one whose expiry is unknown.
enum JWTExpiry {
    /// A payload larger than this is not read (no real access token comes near it).
    static let maximumPayloadLength = 16_384

    private struct Claims: Decodable {
        let exp: Double?
    }

    /// The expiry in `token`'s `exp` claim, or `nil`.
    static func date(in token: String) -> Date? {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].count <= maximumPayloadLength,
            let payload = decodeBase64URL(parts[1]),
            let claims = try? JSONDecoder().decode(Claims.self, from: payload),   // not a JWT: no hint
            let exp = claims.exp, exp.isFinite, exp > 0, exp < 1e11   // up to the year 5138
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }

    /// Base64url (RFC 4648 §5) with or without padding.
    static func decodeBase64URL(_ text: Substring.UTF8View) -> Data? {
        var bytes = Array(text)
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "-"): bytes[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): bytes[index] = UInt8(ascii: "/")
            default: break
            }
        }
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        guard bytes.count % 4 != 1 else { return nil }
        bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        return Data(base64Encoded: Data(bytes))
    }
}
