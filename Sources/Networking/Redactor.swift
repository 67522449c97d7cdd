import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hides secrets in what is logged or printed: credential headers, token-like JSON fields and form
/// fields, and token query parameters. Names are matched case-insensitively.
///
/// ```swift
/// var redactor = Redactor()
/// redactor.headerNames.insert("X-Api-Key")
/// redactor.bodyKeys.insert("pin")
/// let logger = NetworkLogger(redactor: redactor)
/// ```
public struct Redactor: Sendable {
    /// What replaces a secret.
    public static let placeholder = "<redacted>"

    /// Header fields whose values are hidden.
    public var headerNames: Set<String>
    /// JSON object keys (at any depth) and form fields whose values are hidden.
    public var bodyKeys: Set<String>
    /// Query parameters whose values are hidden.
    public var queryNames: Set<String>

    /// Creates a redactor; the defaults cover the usual credentials, and you can add your own.
    public init(
        headerNames: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"],
        bodyKeys: Set<String> = ["accessToken", "refreshToken", "password", "access_token", "refresh_token", "id_token", "client_secret"],
        queryNames: Set<String> = ["access_token", "token"]
    ) {
        self.headerNames = headerNames
        self.bodyKeys = bodyKeys
        self.queryNames = queryNames
    }

    /// Whether the header called `name` is hidden.
    public func hidesHeader(_ name: String) -> Bool {
        headerNames.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// `value`, or the placeholder when the header called `name` is hidden.
    public func headerValue(_ value: String, forName name: String) -> String {
        hidesHeader(name) ? Self.placeholder : value
    }

    /// The URL as text with hidden query values replaced.
    public func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let items = components.percentEncodedQueryItems, !items.isEmpty
        else { return url.absoluteString }
        components.percentEncodedQueryItems = items.map { item in
            guard item.value != nil, matches(queryNames, item.name.removingPercentEncoding ?? item.name) else { return item }
            return URLQueryItem(name: item.name, value: PercentEncoding.component(Self.placeholder))
        }
        return components.string ?? url.absoluteString
    }

    /// The body as text for a log, at most `limit` characters, with hidden JSON and form values
    /// replaced. A JSON body that does not parse and a binary body are described by size only, since
    /// they cannot be redacted.
    public func body(_ data: Data, contentType: String?, limit: Int = 1_024) -> String {
        guard !data.isEmpty else { return "" }
        let type = contentType?.lowercased() ?? ""
        let text: String
        if type.contains("json") || (type.isEmpty && data.first.map { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") } == true) {
            guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
                  let redacted = try? JSONSerialization.data(withJSONObject: redactJSON(object), options: [.sortedKeys, .fragmentsAllowed]),
                  let string = String(data: redacted, encoding: .utf8)
            else { return "<\(data.count) bytes of JSON that could not be parsed, not shown>" }
            text = string
        } else if type.contains("x-www-form-urlencoded") {
            guard let string = String(data: data, encoding: .utf8) else { return "<\(data.count) bytes>" }
            text = redactForm(string)
        } else if type.hasPrefix("text/") || type.contains("xml"), let string = String(data: data, encoding: .utf8) {
            text = string
        } else {
            return "<\(data.count) bytes>"
        }
        return text.count > limit ? String(text.prefix(limit)) + "… (\(data.count) bytes)" : text
    }

    private func matches(_ names: Set<String>, _ name: String) -> Bool {
        names.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    private func redactJSON(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var copy: [String: Any] = [:]
            for (key, inner) in object {
                copy[key] = matches(bodyKeys, key) ? Self.placeholder : redactJSON(inner)
            }
            return copy
        }
        if let array = value as? [Any] { return array.map(redactJSON) }
        return value
    }

    private func redactForm(_ form: String) -> String {
        form.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard parts.count == 2, matches(bodyKeys.union(queryNames), name.removingPercentEncoding ?? name) else { return String(pair) }
            return name + "=" + Self.placeholder
        }.joined(separator: "&")
    }
}
