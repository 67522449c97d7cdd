import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Redactor {
    /// What a log may show of `error`: what it is and its code, never what it carries.
    ///
    /// - a ``NetworkError``: its `description` (a status, a `URLError` code, a host; never a header,
    ///   body or query string);
    /// - a `URLError`: `URLError -1009`, its code only (its `userInfo` holds the failing URL);
    /// - a Foundation `NSError`: its domain and code, `NSCocoaErrorDomain 4`;
    /// - any other error, such as the app's own one made by an ``ErrorResponseMapper``: its type, the
    ///   name of its case when it is an enum, and its code when it conforms to `CustomNSError`:
    ///   `AccountError.locked (code 4023)`.
    ///
    /// Not shown: an error's payload, its `description` and its `LocalizedError` texts, which are written
    /// for people and often repeat what the server said (a message naming the user, a token echoed back).
    /// To put your error's code in the logs, conform it to `CustomNSError` and give its `errorCode`.
    ///
    /// ```swift
    /// enum AccountError: Error, CustomNSError {
    ///     case locked(message: String)
    ///     var errorCode: Int { 4023 }
    /// }
    /// Redactor().error(AccountError.locked(message: "…"))   // "AccountError.locked (code 4023)"
    /// ```
    public func error(_ error: any Error) -> String {
        if let networkError = error as? NetworkError { return networkError.description }
        if let urlError = error as? URLError { return "URLError \(urlError.code.rawValue)" }
        if type(of: error as Any) is NSError.Type {
            let nsError = error as NSError
            return "\(nsError.domain) \(nsError.code)"
        }
        var text = "\(type(of: error))"
        if let name = Self.caseName(of: error) { text += "." + name }
        if let coded = error as? any CustomNSError { text += " (code \(coded.errorCode))" }
        return text
    }

    /// The name of the enum case `error` is, without its payload; `nil` when it is no enum or its type
    /// chose how it is shown (its mirror or description could then say anything).
    private static func caseName(of error: any Error) -> String? {
        guard !(error is any CustomReflectable) else { return nil }
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .enum else { return nil }
        if let label = mirror.children.first?.label { return label }   // a case with a payload: its label is the case's name
        // A case without a payload: its name is what it prints as, unless the type prints itself. Asked of the
        // value as `Any`, so that the runtime answers for the error's own type. (Asked of `any Error`, the
        // compiler counts the bridge to `NSError`, which conforms to all three, and warns each test is true.)
        let value = error as Any
        guard !(value is any CustomStringConvertible), !(value is any CustomDebugStringConvertible), !(value is any TextOutputStreamable)
        else { return nil }
        return String(describing: error)
    }
}
