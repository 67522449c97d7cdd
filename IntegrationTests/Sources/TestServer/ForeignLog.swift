import Foundation

/// Every request the foreign listener received in full: method, path, headers and body, so a test can
/// show that nothing the app attached for its own API (a header, a body) reached another origin.
public actor ForeignLog {
    /// One request as the foreign listener received it.
    public struct Entry: Sendable {
        /// The method, e.g. `POST`.
        public let method: String
        /// The path, e.g. `/landing`.
        public let path: String
        /// The header fields, by canonical name.
        public let headers: [String: String]
        /// The body (empty when there was none).
        public let body: Data

        /// The value of a header, looked up case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// The requests received, in arrival order.
    public private(set) var entries: [Entry] = []

    public init() {}

    func record(_ entry: Entry) { entries.append(entry) }
}
