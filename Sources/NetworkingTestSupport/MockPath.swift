import Foundation

/// Paths as the mock compares them: as they go on the wire (RFC 9112 §3.2), so a stub answers exactly
/// the requests a real server would route to the same resource. A trailing slash is significant, and an
/// encoded reserved character (`%2F`) is not the character itself (RFC 3986 §2.2). Only what RFC 3986
/// §6.2.2 calls equivalent is made equal: the case of the hex digits of an escape, and an escaped
/// unreserved character (`%7E` and `~`).
enum MockPath {
    /// The percent-encoded path of `url` as sent: `/` when it has none.
    static func wirePath(of url: URL) -> String {
        let path = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// `path` in the form compared: characters a path cannot carry as they are (a space, non-ASCII, a `%`
    /// that starts no `%XX` escape, as in `50%off`) percent-encoded as UTF-8, the hex digits of every escape upper-cased, escaped unreserved characters
    /// decoded; `/` for an empty path.
    static func normalized(_ path: String) -> String {
        let bytes = Array((path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path).utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    result.append(decoded)
                } else {
                    result.append(contentsOf: [byte, hexDigits[Int(high)], hexDigits[Int(low)]])
                }
                index += 3
            } else if byte == UInt8(ascii: "%") {
                result.append(contentsOf: Array("%25".utf8))   // a `%` that starts no escape is a literal one
                index += 1
            } else {
                result.append(byte)
                index += 1
            }
        }
        return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
    }

    /// What a path may hold as it is, `%` included (existing escapes stay as they are).
    private static let allowed: CharacterSet = {
        var allowed = CharacterSet.urlPathAllowed
        allowed.insert(charactersIn: "%")
        return allowed
    }()

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// ALPHA, DIGIT, `-`, `.`, `_`, `~` (RFC 3986 §2.3).
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
        default: return false
        }
    }
}
