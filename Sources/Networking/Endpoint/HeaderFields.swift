import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Header fields read and written the same way on every platform, and cheaply: names compared ignoring
/// ASCII case on their UTF-8 bytes, and every change to a request made in one assignment of
/// `allHTTPHeaderFields`.
///
/// On Linux, `URLRequest.setValue(_:forHTTPHeaderField:)` capitalizes the name through Foundation,
/// compares it with every field through a locale-aware comparison and, for a shared request, copies it:
/// about 20,000 instructions a call, more than the rest of building a request. It also drops a value with
/// CR or LF without a word, where Apple's keeps it; here such a value stays, and ``WireValidation`` turns
/// it into a typed error before anything is sent. Names keep the spelling they were given.
enum HeaderFields {
    /// Whether two header names are equal ignoring ASCII case (names are tokens: ASCII only), without
    /// Foundation's locale-aware comparison, which costs more than the whole lookup.
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var (a, b) = (a, b)   // `withUTF8` reads a native string's bytes in place (a zip of the two views is not inlined)
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for index in a.indices where a[index] != b[index] {
                    let (x, y) = (a[index] | 0x20, b[index] | 0x20)
                    guard x == y, x >= 0x61, x <= 0x7A else { return false }
                }
                return true
            }
        }
    }

    /// The value of header `name` in `fields`, looked up case-insensitively.
    static func value(of name: String, in fields: [String: String]) -> String? {
        if let value = fields[name] { return value }
        return fields.first { sameName($0.key, name) }?.value
    }

    /// Sets field `name` of `fields` to `value` (removes it for `nil`), replacing a field of the same name in
    /// any spelling; with `keepingExisting`, a field that is there already stays as it is.
    static func set(_ value: String?, for name: String, in fields: inout [String: String], keepingExisting: Bool = false) {
        if let existing = fields.keys.first(where: { sameName($0, name) }) {
            if keepingExisting { return }
            fields.removeValue(forKey: existing)
        }
        if let value { fields[name] = value }
    }
}

extension URLRequest {
    /// The value of header field `name`, looked up case-insensitively: `value(forHTTPHeaderField:)` without
    /// Foundation's locale-aware comparisons.
    func headerField(_ name: String) -> String? {
        allHTTPHeaderFields.flatMap { HeaderFields.value(of: name, in: $0) }
    }

    /// Sets header fields (a `nil` value removes the field) in one assignment: what
    /// `setValue(_:forHTTPHeaderField:)` does for each, at a fraction of its cost (see ``HeaderFields``).
    mutating func setHeaderFields(_ changes: KeyValuePairs<String, String?>) {
        var fields = allHTTPHeaderFields ?? [:]
        for (name, value) in changes { HeaderFields.set(value, for: name, in: &fields) }
        allHTTPHeaderFields = fields
    }
}
