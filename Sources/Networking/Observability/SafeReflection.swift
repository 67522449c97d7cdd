import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// `dump()`, debuggers and `String(reflecting:)` walk a value's stored properties unless its type
// gives its own mirror. These mirrors keep tokens, cookies, passwords and API keys out of that output
// for the package's public types that hold a request, a body, an error or a credential (a response
// stream's transfer holds its request). (`Response`, `Credential` and `AuthInterceptor` define theirs next
// to the type.)

extension NetworkError: CustomReflectable {
    /// Shows the case as ``description`` says it: never a header value, a body, a query string, or
    /// the underlying error's own fields (a `URLError` carries the failing URL, an `EncodingError`
    /// the value that failed to encode).
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}

extension RequestBody: CustomReflectable {
    /// Shows the kind of body and its size or type, never its content: a JSON value shows its type
    /// name, a form its field names, data its byte count and content type.
    public var customMirror: Mirror {
        switch self {
        case .none:
            return Mirror(self, children: [], displayStyle: .enum)
        case let .json(value, _):
            return Mirror(self, children: ["json": "\(type(of: value))"], displayStyle: .enum)
        case let .data(data, contentType):
            return Mirror(self, children: ["data": "\(data.count) bytes", "contentType": contentType], displayStyle: .enum)
        case let .form(items):
            return Mirror(self, children: ["form": items.map(\.name)], displayStyle: .enum)
        case let .file(url, contentType):
            return Mirror(self, children: ["file": url.lastPathComponent, "contentType": contentType], displayStyle: .enum)
        case let .multipart(form):
            return Mirror(self, children: ["multipart": form.parts.map(\.name)], displayStyle: .enum)
        }
    }
}

extension RequestContext: CustomReflectable {
    /// Shows the endpoint's type, method and path and the retry count, not the endpoint's headers
    /// or body, nor the interceptors' notes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoint": "\(type(of: endpoint))",
                "method": endpoint.method.rawValue,
                "path": endpoint.path,
                "retryCount": retryCount,
            ], displayStyle: .class)
    }
}

extension NetworkProvider: CustomReflectable {
    /// Shows the interceptor (whose own mirror hides its credential) and the attempt cap, not the
    /// session, whose tasks hold the requests in flight with their headers.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "interceptor": interceptor as Any,
                "maximumAttempts": maximumAttempts,
            ], displayStyle: .class)
    }
}

extension ResponseStream: CustomReflectable {
    /// Shows the response (whose own mirror hides its secrets and those of the request sent), not the
    /// transfer behind the stream, whose task holds the request with its headers.
    public var customMirror: Mirror {
        Mirror(self, children: ["response": response, "limit": limit], displayStyle: .struct)
    }
}

extension ResponseStream.AsyncIterator: CustomReflectable {
    /// Shows nothing: an iterator holds the transfer (whose task holds the request) and body bytes.
    public var customMirror: Mirror {
        Mirror(self, children: [:], displayStyle: .struct)
    }
}

extension ResponseLines: CustomReflectable {
    /// Shows the stream, as its own mirror does.
    public var customMirror: Mirror {
        Mirror(self, children: ["stream": stream], displayStyle: .struct)
    }
}

extension ResponseLines.AsyncIterator: CustomReflectable {
    /// Shows nothing: an iterator holds the transfer and body text not yet returned.
    public var customMirror: Mirror {
        Mirror(self, children: [:], displayStyle: .struct)
    }
}

extension ServerSentEvents: CustomReflectable {
    /// Shows the stream, as its own mirror does.
    public var customMirror: Mirror {
        Mirror(self, children: ["stream": lines.stream], displayStyle: .struct)
    }
}

extension ServerSentEvents.AsyncIterator: CustomReflectable {
    /// Shows nothing: an iterator holds the transfer and event data not yet returned.
    public var customMirror: Mirror {
        Mirror(self, children: [:], displayStyle: .struct)
    }
}
