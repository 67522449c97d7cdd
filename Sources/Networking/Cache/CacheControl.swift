import Foundation

/// The `Cache-Control` directives the provider's cache understands (RFC 9111 §5.2, and RFC 5861's
/// `stale-while-revalidate` and `stale-if-error`), parsed from a request's or a response's header. Unknown
/// directives are ignored; a malformed number is ignored as if the directive were absent, except that a
/// malformed `max-age` counts as 0, already stale (RFC 9111 §4.2.1: "invalid freshness information" is
/// treated as stale). A repeated `max-age` counts as 0 too; a repeated RFC 5861 grant as its smallest value.
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
    /// `stale-while-revalidate` (RFC 5861 §3), in seconds: how long after it goes stale the response may
    /// answer at once while it is revalidated in the background.
    var staleWhileRevalidate: TimeInterval?
    /// `stale-if-error` (RFC 5861 §4), in seconds: how long after it goes stale the response may answer
    /// when the server cannot (a response's grant for every request; a request's for itself).
    var staleIfError: TimeInterval?

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
            } else if Self.matches(name, "stale-while-revalidate") {
                staleWhileRevalidate = Self.least(staleWhileRevalidate, Self.seconds(argument))
            } else if Self.matches(name, "stale-if-error") {
                staleIfError = Self.least(staleIfError, Self.seconds(argument))
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

    /// The smaller of a grant parsed before and a repeated one (RFC 9111 §4.2.1 leaves a repeated directive
    /// to the cache: it grants no more than each of its occurrences); a malformed repeat is ignored.
    private static func least(_ earlier: TimeInterval?, _ repeated: TimeInterval?) -> TimeInterval? {
        guard let earlier, let repeated else { return earlier ?? repeated }
        return min(earlier, repeated)
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
