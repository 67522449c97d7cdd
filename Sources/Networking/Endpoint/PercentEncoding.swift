import Foundation

/// Percent-encoding for the parts of a URL and form body that the endpoint builder writes.
///
/// Works on UTF-8 bytes with a 128-bit table of allowed ASCII bytes, so text that needs no escaping
/// (most paths and values) is returned as it is without copying, and the rest is escaped in one pass.
/// Every byte outside the table, including each byte of a non-ASCII character, becomes `%XX`
/// (uppercase hex), as `addingPercentEncoding(withAllowedCharacters:)` does.
enum PercentEncoding {
    /// A set of ASCII bytes.
    struct ByteSet: Sendable {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ characters: String) {
            for byte in characters.utf8 where byte < 128 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
        }

        @inline(__always)
        func contains(_ byte: UInt8) -> Bool {
            byte < 64 ? (low >> UInt64(byte)) & 1 == 1 : byte < 128 ? (high >> UInt64(byte - 64)) & 1 == 1 : false
        }
    }

    /// RFC 3986 unreserved characters: the only ones left as they are in a query name or value,
    /// so `+`, `&`, `=`, `/`, `?`, spaces and non-ASCII text are always escaped.
    static let unreserved = ByteSet("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// Characters left as they are in a path: unreserved, sub-delims, `:`, `@` and the `/` separator.
    static let pathAllowed = ByteSet("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/")

    /// Escapes a query or form name or value (a space becomes `%20`, which every server decodes).
    static func component(_ string: String) -> String {
        escape(string, keeping: unreserved)
    }

    /// Encodes query items (or form fields) as `name=value` pairs joined by `&`; a nil value gives `name`.
    static func query(_ items: [URLQueryItem]) -> String {
        var result = ""
        for (index, item) in items.enumerated() {
            if index > 0 { result += "&" }
            result += component(item.name)
            if let value = item.value {
                result += "="
                result += component(value)
            }
        }
        return result
    }

    /// Escapes a literal path (one that is not already percent-encoded).
    static func path(_ string: String) -> String {
        escape(string, keeping: pathAllowed)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    static func escape(_ string: String, keeping allowed: ByteSet) -> String {
        let utf8 = string.utf8
        guard let first = utf8.firstIndex(where: { !allowed.contains($0) }) else { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        bytes.append(contentsOf: utf8[..<first])
        for byte in utf8[first...] {
            if allowed.contains(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
