import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Sends one attempt's request and follows its redirects (see ``RedirectPolicy``): each hop is a new
    /// task, its body sent again from where it lives (memory, the endpoint's file, the spooled form).
    /// Cancelling the calling task cancels the `URLSessionTask` at once. `built` is the request before
    /// the interceptors adapted it, when they did: the headers they added never go to another origin.
    /// Returns the last hop's body, response, delivery and request. `slot` is the first hop's (see
    /// ``CallSlots``); each later hop waits for one of its own host's. `answered`: the first hop's answer,
    /// when a shared exchange gave it before the pipeline (see ``CallStart``). A call that may share
    /// (``TransferMode/member``) shares each hop it may with its group (see ``CallGroups``).
    func send(
        _ request: URLRequest,
        slot: CallSlot?,
        answered: (Data, HTTPURLResponse)? = nil,
        builtAs built: URLRequest?,
        for endpoint: some Endpoint,
        context: RequestContext,
        deadline: Deadline,
        limits: (delivery: Int, gathered: Int),
        mode: TransferMode,
        attempt: Int,
        hops: inout [RedirectHop]
    ) async throws -> (Data, HTTPURLResponse, DeliveredBody?, URLRequest) {
        let behavior = endpoint.redirectBehavior ?? redirectBehavior
        var current = request
        var mode = mode
        var followed = 0
        var chain: RedirectChain?   // made at the first redirect: most calls have none
        var held: CallSlot? = slot   // until a task takes it
        var answered = answered
        defer { held?.release() }   // a check below threw first
        while true {
            if Task.isCancelled { throw NetworkError.cancelled }   // never send the next hop for a caller who left
            if deadline.hasPassed { throw deadline.exceeded }
            try serverTrust.checkEnforceable(current.url)   // fails closed where pins cannot be enforced: every hop
            let (data, response, delivered): (Data, HTTPURLResponse, DeliveredBody?)
            if let (body, answer) = answered.take() {
                (data, response, delivered) = (body, answer, nil)
            } else if let member = mode.member, mode.bodyFile == nil, let key = CallGroupKey(current, endpoint: endpoint, account: member.account) {
                held.take()?.release()   // the shared exchange takes its own
                let send = SharedSend(
                    current, key: key, context: context, limits: limits, acceptable: mode.acceptable, followsRedirects: behavior.follows,
                    tellsStart: followed == 0)
                (data, response) = try await sharedTransfer(send, member: member)
                delivered = nil
            } else {
                // Its answer is its own: nothing decoded from an earlier hop's shared answer goes with it.
                if let member = mode.member { _ = callGroups.decodings(answering: member) }
                if mode.member != nil, followed == 0, !events.isEmpty {   // a call that may share, sending alone (see run)
                    events.send { [request = shown(current)] in $0.taskDidStart(request, context: context) }
                }
                let slot: CallSlot
                if let first = held.take() {
                    slot = first
                } else {
                    slot = try await takeSlot(for: current, context: context, deadline: deadline)   // a hop: a slot of its own host
                }
                (data, response, delivered) = try await transfer(
                    current, slot: slot, context: context, deadline: deadline, limits: limits, mode: mode, followsRedirects: behavior.follows)
            }
            guard behavior.follows, RedirectPolicy.isRedirect(response) else { return (data, response, delivered, current) }
            let links =
                chain
                ?? RedirectChain(
                    attempt: request, adaptedHeaders: built.map { RedirectPolicy.headersAdded(by: request, to: $0) } ?? [], kept: routingHeaders)
            chain = links
            var decision = RedirectPolicy.decision(
                statusCode: response.statusCode, location: response.value(forHTTPHeaderField: "Location"), current: current, chain: links,
                hasBody: mode.bodyFile != nil || RedirectPolicy.hasBody(current), allowsInsecure: allowsInsecureRedirects)
            if case .follow = decision, followed == RedirectPolicy.maximumHops { throw URLError(.httpTooManyRedirects) }
            if case .follow(let proposed, let keepsBody) = decision, case .modify(let modifier) = behavior.kind {
                guard let modified = try await modifier(proposed, response) else { return (data, response, delivered, current) }
                if Task.isCancelled { throw NetworkError.cancelled }
                if deadline.hasPassed { throw deadline.exceeded }   // the modifier may have waited
                decision = RedirectPolicy.checked(
                    modified, proposed: proposed, statusCode: response.statusCode, chain: links, keepsBody: keepsBody, current: current,
                    allowsInsecure: allowsInsecureRedirects)
            }
            switch decision {
            case .answer:
                return (data, response, delivered, current)
            case .fail(let error):
                throw error
            case .follow(let next, let keepsBody):
                followed += 1
                chain?.didFollow(to: next)
                storeCookies(of: response)
                if !keepsBody { mode.bodyFile = nil }
                let hop = RedirectHop(statusCode: response.statusCode, from: current.url, to: next, attempt: attempt)
                hops.append(hop)
                if !events.isEmpty { events.send { $0.requestDidRedirect(hop, context: context) } }
                current = next
            }
        }
    }

    /// Saves the cookies a redirect set, so the next hop (a new task) sends them, when the session's
    /// configuration stores and sends cookies. (Measured over TCP: Linux URLSession stores them itself
    /// from a redirect it did not follow; storing them here too makes it a rule of ours on every platform.)
    private func storeCookies(of response: HTTPURLResponse) {
        guard let url = response.url, response.value(forHTTPHeaderField: "Set-Cookie") != nil else { return }
        let configuration = urlSession.configuration
        guard configuration.httpShouldSetCookies, configuration.httpCookieAcceptPolicy != .never,
            let storage = configuration.httpCookieStorage
        else { return }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields { fields["\(name)"] = "\(value)" }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: url)
        if !cookies.isEmpty { storage.setCookies(cookies, for: url, mainDocumentURL: nil) }
    }
}
