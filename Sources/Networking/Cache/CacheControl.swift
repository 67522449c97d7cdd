import Foundation

/// The `Cache-Control` directives the provider's cache understands (RFC 9111 §5.2), parsed from a
/// request's or a response's header. Unknown directives are ignored; a malformed number is ignored as
/// if the directive were absent, except that a malformed `max-age` on a response counts as stale
/// (RFC 9111 §4.2.1: "invalid freshness information" is treated as stale).
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
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let rawName = pieces.first else { continue }
            let name = rawName.trimmingCharacters(in: .whitespaces).lowercased()
            let argument = pieces.count > 1 ? Self.unquoted(pieces[1]) : nil
            switch name {
            case "no-store": noStore = true
            // `no-cache="Set-Cookie"` (a field list) is stricter than a private cache needs; treated as `no-cache`.
            case "no-cache": noCache = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "immutable": immutable = true
            case "only-if-cached": onlyIfCached = true
            case "max-age": maxAge = Self.seconds(argument) ?? 0
            case "max-stale": maxStale = argument == nil ? .infinity : Self.seconds(argument)
            case "min-fresh": minFresh = Self.seconds(argument)
            default: continue
            }
        }
    }

    /// A delta-seconds argument: digits only (a huge value is clamped, never an overflow).
    private static func seconds(_ text: String?) -> TimeInterval? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Double(text.prefix(12)) ?? nil
    }

    private static func unquoted(_ text: Substring) -> String {
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        return value
    }
}
