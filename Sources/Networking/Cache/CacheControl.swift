import Foundation

/// The `Cache-Control` directives the provider's cache understands (RFC 9111 §5.2), parsed from a
/// request's or a response's header. Unknown directives are ignored; a malformed number is ignored as
/// if the directive were absent, except that a malformed `max-age` counts as 0, already stale
/// (RFC 9111 §4.2.1: "invalid freshness information" is treated as stale).
///
/// Parsed on the header's UTF-8 bytes: a fresh cache hit parses it, and Foundation's trimming and
/// case-insensitive comparison would cost more than the rest of the hit.
struct CacheControl: Equatable {
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    var isPrivate = false
    var isPublic = false
    var immutable = false
    var onlyIfCached = false
    /// `max-age`, in seconds; `0` when present but malformed.
    var maxAge: TimeInterval?
    var maxStale: TimeInterval?
    var minFresh: TimeInterval?

    init() {}

    /// Parses every `Cache-Control` value of `header` (comma-separated, directives case-insensitive,
    /// arguments as tokens or quoted strings). A `Pragma: no-cache` counts as `no-cache` when there is
    /// no `Cache-Control` (RFC 9111 §5.4).
    init(header: String?, pragma: String? = nil) {
        guard let header, !header.isEmpty else {
            if let pragma, pragma.range(of: "no-cache", options: .caseInsensitive) != nil { noCache = true }
            return
        }
        for part in header.utf8.split(separator: UInt8(ascii: ",")) {
            let directive = Self.trimmed(part)
            let equals = directive.firstIndex(of: UInt8(ascii: "="))
            let name = Self.trimmed(directive[..<(equals ?? directive.endIndex)])
            let argument = equals.map { Self.unquoted(Self.trimmed(directive[directive.index(after: $0)...])) }
            if Self.matches(name, "max-age") {
                maxAge = maxAge == nil ? Self.seconds(argument) ?? 0 : 0   // a second max-age is invalid: stale (RFC 9111 §4.2.1)
            } else if Self.matches(name, "no-cache") {
                noCache = true   // `no-cache="Set-Cookie"` (a field list) is stricter than a private cache needs
            } else if Self.matches(name, "no-store") {
                noStore = true
            } else if Self.matches(name, "must-revalidate") || Self.matches(name, "proxy-revalidate") {
                mustRevalidate = true
            } else if Self.matches(name, "private") {
                isPrivate = true
            } else if Self.matches(name, "public") {
                isPublic = true
            } else if Self.matches(name, "immutable") {
                immutable = true
            } else if Self.matches(name, "only-if-cached") {
                onlyIfCached = true
            } else if Self.matches(name, "max-stale") {
                maxStale = argument == nil ? .infinity : Self.seconds(argument)
            } else if Self.matches(name, "min-fresh") {
                minFresh = Self.seconds(argument)
            }
        }
    }

    typealias Bytes = Substring.UTF8View.SubSequence

    /// `bytes` without spaces and tabs around it.
    static func trimmed(_ bytes: Bytes) -> Bytes {
        var bytes = bytes
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }

    /// `bytes` without the double quotes around it, if it has them.
    private static func unquoted(_ bytes: Bytes) -> Bytes {
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return bytes }
        return bytes.dropFirst().dropLast()
    }

    /// Whether `name` is `directive` (lowercase ASCII), ignoring case.
    private static func matches(_ name: Bytes, _ directive: StaticString) -> Bool {
        guard name.count == directive.utf8CodeUnitCount else { return false }
        var index = 0
        for byte in name {
            let expected = directive.utf8Start[index]
            guard byte == expected || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == expected) else { return false }
            index += 1
        }
        return true
    }

    /// A delta-seconds argument: digits only; a huge value is clamped (never an overflow).
    private static func seconds(_ bytes: Bytes?) -> TimeInterval? {
        guard let bytes, !bytes.isEmpty else { return nil }
        var value: Int64 = 0   // not Int: 32 bits on watchOS (arm64_32)
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = min(value * 10 + Int64(byte - 0x30), 999_999_999_999)
        }
        return TimeInterval(value)
    }
}
