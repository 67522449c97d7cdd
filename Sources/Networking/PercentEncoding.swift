import Foundation

/// Percent-encoding for the parts of a URL and form body that the endpoint builder writes.
///
/// `addingPercentEncoding` only returns nil for text that is not valid Unicode, which a Swift `String`
/// cannot hold, so these functions return the input unchanged in that impossible case.
enum PercentEncoding {
    /// RFC 3986 unreserved characters: the only ones left as they are in a query name or value,
    /// so `+`, `&`, `=`, `/`, `?`, spaces and non-ASCII text are always escaped.
    private static let unreserved: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        set.insert(charactersIn: "-._~")
        return set
    }()

    /// Characters left as they are in a path: unreserved, sub-delims, `:`, `@` and the `/` separator.
    private static let pathAllowed: CharacterSet = {
        var set = unreserved
        set.insert(charactersIn: "!$&'()*+,;=:@/")
        return set
    }()

    /// Escapes a query or form name or value (a space becomes `%20`, which every server decodes).
    static func component(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: unreserved) ?? string
    }

    /// Encodes query items (or form fields) as `name=value` pairs joined by `&`; a nil value gives `name`.
    static func query(_ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = component(item.name)
            guard let value = item.value else { return name }
            return name + "=" + component(value)
        }.joined(separator: "&")
    }

    /// Escapes a literal path (one that is not already percent-encoded).
    static func path(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: pathAllowed) ?? string
    }
}
