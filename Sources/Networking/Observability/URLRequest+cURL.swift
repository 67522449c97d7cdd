import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// The request as a `curl` command, with secrets hidden by a default ``Redactor``.
    ///
    /// Every argument is single-quoted, so no header or body can break out of the command.
    ///
    /// ```swift
    /// print(request.cURLDescription)   // curl -X 'GET' -H 'Authorization: <redacted>' 'https://…'
    /// ```
    public var cURLDescription: String {
        cURLDescription(redactor: Redactor())
    }

    /// The request as a `curl` command, hiding what `redactor` hides, or nothing at all when it is
    /// `nil` (for reproducing a request by hand: the output then contains the secrets).
    public func cURLDescription(redactor: Redactor?) -> String {
        var arguments = ["curl", "-X", Self.shellQuoted(httpMethod ?? "GET")]
        for (name, value) in (allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            let shown = redactor?.headerValue(value, forName: name) ?? value
            arguments += ["-H", Self.shellQuoted("\(name): \(shown)")]
        }
        if let body = httpBody, !body.isEmpty {
            let contentType = value(forHTTPHeaderField: "Content-Type")
            if let redactor {
                arguments += ["--data-binary", Self.shellQuoted(redactor.body(body, contentType: contentType, limit: .max))]
            } else if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                arguments += ["--data-binary", Self.shellQuoted(text)]
            } else {
                arguments += ["--data-binary", Self.shellQuoted("<\(body.count) bytes of binary body>")]
            }
        }
        let urlText = url.map { redactor?.url($0) ?? $0.absoluteString } ?? ""
        arguments.append(Self.shellQuoted(urlText))
        return arguments.joined(separator: " ")
    }

    /// `text` in single quotes for a POSIX shell: a `'` inside becomes `'\''`. Nothing is special
    /// inside single quotes, so `$`, backticks, `;` and newlines stay literal.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
