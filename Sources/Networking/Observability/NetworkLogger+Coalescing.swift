import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkLogger {
    /// Logs `GET https://api.example.com/v1/me ⇢ joined a call in flight` (the URL redacted) for a call that
    /// shares the exchange of an identical call (see ``Scheduling/coalescesIdenticalCalls``); its own line
    /// follows when it ends.
    public func callDidJoin(_ request: URLRequest, context: RequestContext) {
        let url = request.url.map(redactor.url) ?? "?"
        sink.write("\(request.httpMethod ?? "GET") \(url) ⇢ joined a call in flight")
    }
}
