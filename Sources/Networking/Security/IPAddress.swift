import Foundation

/// IP address literals as pins compare them: by value, not by spelling. Plain Swift on every platform (no
/// `inet_pton`, whose accepted forms differ between libcs), so the rules tested here are the ones that run.
///
/// - IPv6 (RFC 4291 §2.2): eight groups of one to four hex digits, one `::` for a run of zero groups, and
///   an IPv4 dotted quad as the last 32 bits. Its canonical text is RFC 5952's (§4: lowercase, no leading
///   zeros, the longest run of two or more zero groups as `::`, the first of equal runs), except that an
///   IPv4-mapped address (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2) is its IPv4 address: a connection to one
///   is a connection to the other, so a pin on either covers both.
/// - IPv4, as a pin declares it: a dotted quad of decimal numbers 0–255 without leading zeros.
/// - IPv4, as a URL may spell it: every form `inet_aton` and so the resolvers behind URLSession and libcurl
///   accept (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433` all reach 127.0.0.1), read as its dotted quad.
enum IPAddress {
    /// The canonical text of the IPv6 literal `text` (no brackets, no zone), or `nil` when it is not one.
    static func canonicalIPv6(_ text: some StringProtocol) -> String? {
        guard let groups = ipv6Groups(Substring(text)) else { return nil }
        if groups[0..<5].allSatisfy({ $0 == 0 }), groups[5] == 0xFFFF {   // IPv4-mapped: the IPv4 address
            return [groups[6] >> 8, groups[6] & 0xFF, groups[7] >> 8, groups[7] & 0xFF].map(String.init).joined(separator: ".")
        }
        // The longest run of two or more zero groups (the first of equal ones) becomes "::".
        var (bestStart, bestLength, start) = (0, 0, 0)
        for index in 0...8 {
            if index < 8, groups[index] == 0 { continue }
            if index - start > bestLength { (bestStart, bestLength) = (start, index - start) }
            start = index + 1
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestLength >= 2 else { return hex.joined(separator: ":") }
        return hex[0..<bestStart].joined(separator: ":") + "::" + hex[(bestStart + bestLength)...].joined(separator: ":")
    }

    /// The dotted quad of `text` when it is one as a pin declares it (`192.0.2.1`: four decimal numbers 0–255,
    /// none with a leading zero), or `nil`.
    static func strictIPv4(_ text: some StringProtocol) -> String? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy(isDigit), part == "0" || !part.hasPrefix("0"),
                let value = Int(part), value <= 255
            else { return nil }
        }
        return String(text)
    }

    /// The dotted quad of the IPv4 address `text` names in any form `inet_aton` accepts: one to four parts,
    /// each decimal, octal (a leading `0`) or hex (`0x`), the last filling the bytes the others leave; `nil`
    /// when it is not such an address (a host name).
    static func lenientIPv4(_ text: some StringProtocol) -> String? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            guard let value = inetNumber(Substring(part)) else { return nil }
            values.append(value)
        }
        let lastBits = UInt64(8 * (5 - values.count))
        guard values.dropLast().allSatisfy({ $0 <= 255 }), let last = values.last, last < (1 << lastBits) else { return nil }
        var address = last
        for (index, value) in values.dropLast().enumerated() { address |= value << UInt64(24 - 8 * index) }
        return [24, 16, 8, 0].map { String((address >> UInt64($0)) & 0xFF) }.joined(separator: ".")
    }

    /// Whether `host`, as ``HostName`` normalizes it, is an address rather than a name.
    static func isLiteral(_ host: String) -> Bool {
        host.contains(":") || strictIPv4(host) != nil
    }

    /// The eight 16-bit groups of the IPv6 literal `text`.
    private static func ipv6Groups(_ text: Substring) -> [UInt16]? {
        guard text.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        let compressed = halves.count == 2
        guard var head = groups(of: halves[0], mayEndInIPv4: !compressed) else { return nil }
        var tail: [UInt16] = []
        if compressed {
            guard let groups = groups(of: halves[1], mayEndInIPv4: true) else { return nil }
            tail = groups
        }
        if compressed {
            guard head.count + tail.count <= 7 else { return nil }   // "::" stands for at least one zero group
            head += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        return head.count == 8 ? head : nil
    }

    /// The groups of one side of a `::` (empty for an empty side); the last may be an IPv4 dotted quad.
    private static func groups(of side: String, mayEndInIPv4: Bool) -> [UInt16]? {
        guard !side.isEmpty else { return [] }
        let fields = side.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, field) in fields.enumerated() {
            if field.contains(".") {
                guard mayEndInIPv4, index == fields.count - 1, let quad = strictIPv4(field) else { return nil }
                let bytes = quad.split(separator: ".").compactMap { UInt16($0) }
                groups += [bytes[0] << 8 | bytes[1], bytes[2] << 8 | bytes[3]]
            } else {
                guard (1...4).contains(field.utf8.count), let group = UInt16(field, radix: 16) else { return nil }
                groups.append(group)
            }
        }
        return groups
    }

    /// One part of an `inet_aton` address: decimal, octal after a leading `0`, hex after `0x`, with any number of
    /// leading zeros; at most 32 bits.
    private static func inetNumber(_ part: Substring) -> UInt64? {
        var digits = part
        var radix = 10
        if digits.lowercased().hasPrefix("0x") {
            (digits, radix) = (digits.dropFirst(2), 16)
            if digits.isEmpty { return 0 }   // "0x" alone is 0 to inet_aton
        } else if digits.hasPrefix("0"), digits.count > 1 {
            (digits, radix) = (digits.dropFirst(), 8)
        }
        digits = digits.drop { $0 == "0" }   // inet_aton (strtoul) reads any number of leading zeros
        if digits.isEmpty { return 0 }
        guard digits.utf8.count <= 32, digits.utf8.allSatisfy(isHexDigit), let value = UInt64(digits, radix: radix),
            value <= UInt64(UInt32.max)
        else { return nil }
        return value
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
