import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hides secrets in what is logged or printed: credential headers, token-like JSON fields and form
/// fields, and token query parameters. Names are matched case-insensitively; JSON keys at any depth,
/// inside objects and arrays.
///
/// What is hidden by default:
/// - headers in ``headerNames`` (``defaultHeaderNames``: `Authorization`, `Proxy-Authorization`,
///   `Cookie`, `Set-Cookie`, `X-Api-Key`, `X-Auth-Token`);
/// - the header every ``AuthInterceptor`` in the process writes, whatever its name, without the app
///   listing it (registered when the interceptor is created, so a logger made earlier hides it too);
/// - a header named like a secret field (a header literally called `accessToken`, `token` or
///   `api_key`): a header is hidden when its name is in ``headerNames`` **or** in ``bodyKeys``;
/// - JSON keys and form fields in ``bodyKeys``, and query parameters in ``queryNames``
///   (both ``defaultSecretNames``: `token`, `access_token`, `accessToken`, `refresh_token`,
///   `refreshToken`, `id_token`, `sessionToken`, `jwt`, `code`, `code_verifier`, `password`, `secret`,
///   `client_secret`, `api_key`, `apiKey`; query parameters also ``defaultSignedURLQueryNames``, the
///   signatures and keys of presigned URLs: `X-Amz-Signature`, `X-Amz-Credential`, `sig`, `Signature`,
///   `Policy`, `Key-Pair-Id`, `key`, …);
/// - any JSON key, form field, query parameter or header whose name **contains** one of
///   ``secretNameFragments`` (``defaultSecretNameFragments``: `token`, `secret`, `password`), such as
///   `csrfToken`, `X-Session-Token`, `new_password` or `webhookSecret`. Other names must match exactly:
///   `code` is hidden, `statusCode`, `postcode` and `divisionCode` are not;
/// - in every URL shown: the hidden query parameters, the same names in a fragment of `name=value`
///   pairs (OAuth's implicit flow: `#access_token=…&state=…`; a fragment of another form is left as it
///   is), and the user and password (`https://user:pass@host`); also inside URL-valued headers
///   (`Location`, `Content-Location`, `Referer`).
///
/// Add your own names to the sets:
///
/// ```swift
/// var redactor = Redactor()
/// redactor.headerNames.insert("X-Session")
/// redactor.bodyKeys.insert("pin")
/// let logger = NetworkLogger(redactor: redactor)
/// ```
public struct Redactor: Sendable {
    /// What replaces a secret.
    public static let placeholder = "<redacted>"

    /// The header fields hidden by default: `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie`, `X-Api-Key`, `X-Auth-Token`.
    public static let defaultHeaderNames: Set<String> = [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token",
    ]

    /// The JSON keys, form fields and query parameters hidden by default: `token`, `access_token`,
    /// `accessToken`, `refresh_token`, `refreshToken`, `id_token`, `sessionToken`, `jwt`, `code` (an
    /// OAuth authorization code), `code_verifier` (its PKCE verifier), `password`, `secret`,
    /// `client_secret`, `api_key`, `apiKey`.
    public static let defaultSecretNames: Set<String> = [
        "token", "access_token", "accessToken", "refresh_token", "refreshToken", "id_token", "sessionToken",
        "jwt", "code", "code_verifier", "password", "secret", "client_secret", "api_key", "apiKey",
    ]

    /// The query parameters that sign or authorize a URL by themselves, hidden in URLs by default beside
    /// ``defaultSecretNames``: the signatures and credentials of presigned URLs (S3's `X-Amz-Signature`,
    /// `X-Amz-Credential`, `X-Amz-Security-Token`; Google Cloud Storage's `X-Goog-Signature`,
    /// `X-Goog-Credential`; Azure SAS's `sig`; CloudFront's `Signature`, `Policy`, `Key-Pair-Id`) and API
    /// keys (`key`, `apikey`, `api-key`, `auth`). Anyone holding such a URL can use it until it expires.
    public static let defaultSignedURLQueryNames: Set<String> = [
        "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature", "X-Goog-Credential", "sig",
        "Signature", "Key-Pair-Id", "Policy", "key", "apikey", "api-key", "auth",
    ]

    /// The parts of a name that make it a secret wherever they occur in it, in any letter case:
    /// `token`, `secret`, `password`.
    public static let defaultSecretNameFragments: Set<String> = ["token", "secret", "password"]

    /// Headers whose value is a URL, shown with their hidden query parameters replaced.
    private static let urlHeaderNames: Set<String> = ["Location", "Content-Location", "Referer"]

    /// Header fields whose values are hidden (in addition to ``bodyKeys`` and the headers the
    /// ``AuthInterceptor``s write).
    public var headerNames: Set<String>
    /// JSON object keys (at any depth) and form fields whose values are hidden; a header of one of
    /// these names is hidden too.
    public var bodyKeys: Set<String>
    /// Query parameters whose values are hidden, in URLs (their query and a `name=value` fragment)
    /// and in form bodies (by default ``defaultSecretNames`` and ``defaultSignedURLQueryNames``).
    public var queryNames: Set<String>
    /// A JSON key, form field, query parameter or header whose name contains one of these, in any
    /// letter case, is hidden too (``defaultSecretNameFragments``). Remove one to match only the names
    /// in the sets; insert your own (`"pin"`) to hide every name containing it.
    public var secretNameFragments: Set<String> = Redactor.defaultSecretNameFragments

    /// Creates a redactor; the defaults cover the usual credentials, and you can add your own.
    public init(
        headerNames: Set<String> = Redactor.defaultHeaderNames,
        bodyKeys: Set<String> = Redactor.defaultSecretNames,
        queryNames: Set<String> = Redactor.defaultSecretNames.union(Redactor.defaultSignedURLQueryNames)
    ) {
        self.headerNames = headerNames
        self.bodyKeys = bodyKeys
        self.queryNames = queryNames
    }

    /// Whether the header called `name` is hidden: it is in ``headerNames`` or ``bodyKeys``, contains
    /// one of ``secretNameFragments``, or an ``AuthInterceptor`` writes it.
    public func hidesHeader(_ name: String) -> Bool {
        matches(headerNames, name) || isSecret(name, in: bodyKeys) || SecretHeaderNames.contains(name)
    }

    /// `value`, or the placeholder when the header called `name` is hidden. A URL-valued header
    /// (`Location`, `Content-Location`, `Referer`) is shown as ``url(_:)`` shows a URL.
    public func headerValue(_ value: String, forName name: String) -> String {
        if hidesHeader(name) { return Self.placeholder }
        if matches(Self.urlHeaderNames, name), value.contains(where: { $0 == "?" || $0 == "#" || $0 == "@" }),
            let url = URL(string: value)
        {
            return self.url(url)
        }
        return value
    }

    /// The header fields with hidden values replaced, sorted by name (case-insensitively), as
    /// `Name: value` lines.
    public func headerLines(_ fields: [String: String]) -> [String] {
        fields.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { name, value in
            "\(name): \(headerValue(value, forName: name))"
        }
    }

    /// The URL as text with hidden query values replaced, the same names in a fragment of
    /// `name=value` pairs (`#access_token=…&state=…`) replaced, and its user and password
    /// (`https://user:pass@host`) replaced. A fragment of another form (`#section-2`) is left as it is.
    public func url(_ url: URL) -> String {
        guard url.query != nil || url.fragment != nil || url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        let hidden = PercentEncoding.component(Self.placeholder)
        // The user too: a token is often sent as the user name (`https://<token>@host`).
        if components.percentEncodedUser != nil { components.percentEncodedUser = hidden }
        if components.percentEncodedPassword != nil { components.percentEncodedPassword = hidden }
        if let items = components.percentEncodedQueryItems, !items.isEmpty {
            components.percentEncodedQueryItems = items.map { item in
                guard item.value != nil, isSecret(item.name.removingPercentEncoding ?? item.name, in: queryNames) else { return item }
                return URLQueryItem(name: item.name, value: hidden)
            }
        }
        if let fragment = components.percentEncodedFragment, fragment.contains("=") {
            components.percentEncodedFragment = redactPairs(fragment, names: queryNames)
        }
        return components.string ?? Self.placeholder   // never the unredacted text
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

    /// Whether the value of a query item called `name` is hidden (the cache keys it by digest).
    func hidesQueryItem(named name: String) -> Bool {
        isSecret(name, in: queryNames)
    }

    private func matches(_ names: Set<String>, _ name: String) -> Bool {
        names.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Whether `name` is one of `names`, or contains one of ``secretNameFragments``, in any letter case.
    private func isSecret(_ name: String, in names: Set<String>) -> Bool {
        matches(names, name) || secretNameFragments.contains { !$0.isEmpty && name.range(of: $0, options: .caseInsensitive) != nil }
    }

    /// `name=value&…` text (a form body, a URL fragment) with the values of secret names replaced;
    /// a piece without `=` is left as it is.
    private func redactPairs(_ text: String, names: Set<String>) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard parts.count == 2, isSecret(name.removingPercentEncoding ?? name, in: names) else { return String(pair) }
            return name + "=" + PercentEncoding.component(Self.placeholder)
        }.joined(separator: "&")
    }

    private func redactJSON(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var copy: [String: Any] = [:]
            for (key, inner) in object {
                copy[key] = isSecret(key, in: bodyKeys) ? Self.placeholder : redactJSON(inner)
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
            guard parts.count == 2, isSecret(name.removingPercentEncoding ?? name, in: bodyKeys.union(queryNames)) else { return String(pair) }
            return name + "=" + Self.placeholder
        }.joined(separator: "&")
    }
}
