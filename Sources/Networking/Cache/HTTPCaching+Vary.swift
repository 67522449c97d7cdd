import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `Vary` (RFC 9111 §4.1): the request header fields a stored response was selected by, and whether a
/// later request sends the same.
extension HTTPCaching {
    /// The most field names a stored response's `Vary` may list: one that lists more is not stored, as
    /// `*` (every later lookup compares each name).
    static let maximumVaryNames = 64

    /// The lowercased field names the `Vary` fields of `headers` list, each once, from every `Vary` field
    /// line (any spelling of the name; RFC 9110 §5.3: lines combine into one list); empty members are
    /// skipped (RFC 9110 §5.6.1.2). `["*"]` when a member is `*` or not a field name (a token, RFC 9110
    /// §5.1, §12.5.5), or when there are more than ``maximumVaryNames``: such a response never matches a
    /// later request.
    static func varyNames(in headers: [String: String]) -> [String] {
        var (names, seen): ([String], Set<String>) = ([], [])
        for (name, value) in headers where HeaderFields.sameName(name, "Vary") {
            for member in SelectingField.members(of: Array(value.utf8)) where !member.isEmpty {
                guard member != [UInt8(ascii: "*")], member.allSatisfy(SelectingField.isTokenCharacter) else { return ["*"] }
                let lowercased = String(decoding: member.map(SelectingField.lowercased), as: UTF8.self)
                guard seen.insert(lowercased).inserted else { continue }
                names.append(lowercased)
                guard names.count <= maximumVaryNames else { return ["*"] }
            }
        }
        return names
    }

    /// Whether a response that varies on `names` may be stored, or an entry that does may answer:
    /// `*` never matches (RFC 9111 §4.1), and `Cookie` is compared only when the session adds no cookies
    /// of its own. URLSession adds the `Cookie` of its cookie store as it sends a request, after the
    /// cache has compared the request as built: a page that varies on `Cookie` (stored for one user)
    /// would otherwise answer another user, or the same one signed out.
    static func mayVary(on names: [String], sessionAddsCookies: () -> Bool) -> Bool {
        !names.contains("*") && !(names.contains("cookie") && sessionAddsCookies())
    }

    /// For each of `names`, the value `request` sends, normalised (``SelectingField/normalized(_:name:)``),
    /// or `nil` when it sends none: absent, empty and present are three different values. A value a
    /// default ``Redactor`` hides is kept as the digest of its normalised value.
    static func variantHeaders(_ names: [String], of request: URLRequest) -> [String: String?] {
        guard !names.isEmpty else { return [:] }
        let redactor = Redactor()
        var values: [String: String?] = [:]
        for name in names {
            let value = request.headerField(name).map { SelectingField.normalized($0, name: name) }
            // Never `values[name] = value`: a nil assigned through the subscript removes the key, and an
            // absent field would then not count at all.
            values.updateValue(value.map { redactor.hidesHeader(name) ? "sha256:" + SHA256.hex($0) : $0 }, forKey: name)
        }
        return values
    }

    /// Whether `request` sends the values of the fields `entry` was selected by (RFC 9111 §4.1): every
    /// field its stored `Vary` names and every field it kept a value for, a field it kept no value for
    /// counting as absent (entries of earlier versions left absent fields out). Never for an entry that
    /// varies on `Cookie` when `sessionAddsCookies` (``mayVary(on:sessionAddsCookies:)``).
    static func variantMatches(_ entry: CachedResponse, _ request: URLRequest, sessionAddsCookies: @autoclosure () -> Bool = true) -> Bool {
        var names = varyNames(in: entry.headers)
        var seen = Set(names)
        for name in entry.variantHeaders.keys where seen.insert(name).inserted { names.append(name) }
        guard !names.isEmpty else { return true }
        guard mayVary(on: names, sessionAddsCookies: sessionAddsCookies) else { return false }
        let sent = variantHeaders(names, of: request)
        return names.allSatisfy { name in (entry.variantHeaders[name] ?? nil) == (sent[name] ?? nil) }
    }
}

/// How the value of a request field a `Vary` names is compared: normalised only as RFC 9111 §4.1 allows
/// ("adding or removing whitespace, where allowed in the header field's syntax", combining field lines,
/// and "case-normalization, where values are defined to be case-insensitive").
///
/// | fields | normalised |
/// | --- | --- |
/// | every field | white space before and after the value (not part of it, RFC 9110 §5.5) |
/// | `Accept`, `Accept-Charset`, `Accept-Encoding`, `Accept-Language` | a list (RFC 9110 §5.6.1): white space around commas, empty members; parameters (RFC 9110 §5.6.6, the weight §12.4.2): white space around `;`, empty ones, names' case, a quoted token as the token; the media range, charset, coding or language range in lowercase (RFC 9110 §8.3.1, §8.3.2, §8.4.1, §8.5.1) |
/// | the other request fields RFC 9110 and 9111 define as lists: `TE`, `Expect`, `If-Match`, `If-None-Match`, `Cache-Control`, `Pragma`, `Connection`, `Upgrade`, `Via`, `Trailer`, `Content-Encoding`, `Content-Language` | white space around commas outside quoted strings, empty members (RFC 9110 §5.6.1) |
/// | any other field (`Cookie`, `Authorization`, `User-Agent`, an `X-…` of the app's) | nothing more: its syntax is not known to be a list, so a comma or a space in it may be data (`Cookie` separates with `; `, RFC 6265 §5.4) |
///
/// Letter case elsewhere, white space inside a member or a quoted string, and the order of members
/// (RFC 9110 §12.5.4: some recipients read it as preference) always count.
enum SelectingField {
    /// Lists of a media range, charset, coding or language range, with parameters: all case-insensitive
    /// but for parameter values.
    private static let negotiationLists: Set<String> = ["accept", "accept-charset", "accept-encoding", "accept-language"]
    /// The other request fields whose syntax is a list (`#element`): RFC 9110 §10.1.1, §10.1.4, §13.1.1,
    /// §13.1.2, §7.6.1, §7.8, §7.6.3, §6.6.2, §8.4, §8.5; RFC 9111 §5.2, §5.4.
    private static let lists: Set<String> = [
        "te", "expect", "if-match", "if-none-match", "cache-control", "pragma", "connection", "upgrade", "via", "trailer", "content-encoding",
        "content-language",
    ]
    private static let tokenSymbols: [UInt8] = Array("!#$%&'*+-.^_`|~".utf8)
    private static let (comma, semicolon, quote, backslash) = (UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\""), UInt8(ascii: "\\"))

    /// `value` of the field `name` (lowercased), normalised as the table above says.
    static func normalized(_ value: String, name: String) -> String {
        let bytes = trimmed(Array(value.utf8)[...])
        let negotiation = negotiationLists.contains(name)
        guard negotiation || lists.contains(name) else { return String(decoding: bytes, as: UTF8.self) }   // unknown syntax: trimmed only
        var members = members(of: Array(bytes)).filter { !$0.isEmpty }   // RFC 9110 §5.6.1.2: empty members are ignored
        if negotiation { members = members.map(negotiationMember) }
        return String(decoding: Array(members.joined(separator: [comma])), as: UTF8.self)
    }

    /// The members of a comma-separated list, each without white space around it; commas inside quoted
    /// strings (RFC 9110 §5.6.4) do not separate.
    static func members(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        split(bytes[...], at: comma)
    }

    /// `parts` separated by `separator` outside quoted strings, each trimmed.
    private static func split(_ bytes: ArraySlice<UInt8>, at separator: UInt8) -> [ArraySlice<UInt8>] {
        var parts: [ArraySlice<UInt8>] = []
        var (start, index, quoted) = (bytes.startIndex, bytes.startIndex, false)
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted, byte == backslash {
                index += 1   // a quoted-pair: the next byte is data
            } else if byte == quote {
                quoted.toggle()
            } else if !quoted, byte == separator {
                parts.append(trimmed(bytes[start..<index]))
                start = index + 1
            }
            index += 1
        }
        parts.append(trimmed(bytes[start..<min(index, bytes.endIndex)]))
        return parts
    }

    /// One member of `Accept` or an `Accept-…` list: `value *( OWS ";" OWS [ name "=" value ] )`.
    private static func negotiationMember(_ member: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let parts = split(member, at: semicolon)
        var normalized = parts[0].map(lowercased)
        for parameter in parts.dropFirst() where !parameter.isEmpty {
            normalized.append(semicolon)
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else {
                normalized.append(contentsOf: parameter)   // not a parameter: kept as it came
                continue
            }
            normalized.append(contentsOf: parameter[...equals].map(lowercased))   // names are case-insensitive
            normalized.append(contentsOf: unquotedToken(parameter[(equals + 1)...]))
        }
        return normalized[...]
    }

    /// A quoted string whose content is a token, as that token (RFC 9110 §5.6.6: the two are equivalent).
    private static func unquotedToken(_ value: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard value.count > 2, value.first == quote, value.last == quote else { return value }
        let content = value.dropFirst().dropLast()
        return content.allSatisfy(isTokenCharacter) ? content : value
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isWhiteSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isWhiteSpace($0) }), let last = bytes.lastIndex(where: { !isWhiteSpace($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }

    /// Whether `byte` may appear in a token (`tchar`, RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): return true
        default: return tokenSymbols.contains(byte)
        }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
