import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `URLSessionTask` shared by the members of a ``CallGroup`` that send the same request (see
/// ``CallGroups``): the members that wait for it, and its answer once it ended. It waits for its slot in
/// the queue itself (a ``SlotWaiter`` in its starter's call's place, with no deadline: its members watch
/// theirs), so that a queued exchange holds nothing more than itself.
final class SharedTransfer: SlotWaiter, @unchecked Sendable {
    // @unchecked: every `var` is guarded by the lock of the ``CallGroups`` that holds it (those of
    // ``SlotWaiter`` by the slots' lock; `queuedAt` is written before it is queued).
    /// What it sends: its starter's request (and the request's key), call and limits.
    let send: SharedSend
    /// The provider that sends it.
    let provider: NetworkProvider
    /// The request's key (the request as sent, and its call's endpoint and account).
    var key: CallGroupKey { send.key }
    /// The member that waits first: an exchange waited for by one member needs no dictionary.
    private var first: GroupMember?
    private var others: [ObjectIdentifier: GroupMember] = [:]
    /// Its answer or error, once it ended.
    var outcome: Result<(Data, HTTPURLResponse), any Error>?
    /// Every member left before it ended: it was cancelled, and no member shares it afterwards.
    var abandoned = false
    /// Its task, once it started.
    var handle: TaskHandle?
    /// When it went to the queue (`DispatchTime.uptimeNanoseconds`), 0 until it did.
    var queuedAt: UInt64 = 0
    /// What its members decoded from its answer, once two or more have it.
    private var decodings: SharedDecodings?

    init(_ send: SharedSend, provider: NetworkProvider) {
        self.send = send
        self.provider = provider
        super.init(priority: send.context.endpoint.priority, slots: provider.slots, deadlineSeconds: .infinity)
    }

    /// What its members decode from its answer (made the first time it is asked for).
    func sharedDecodings() -> SharedDecodings {
        if let decodings { return decodings }
        let made = SharedDecodings()
        decodings = made
        return made
    }

    /// No member waits for it.
    var isDeserted: Bool { first == nil && others.isEmpty }

    func add(_ member: GroupMember) {
        if first == nil { first = member } else { others[ObjectIdentifier(member)] = member }
    }

    func remove(_ member: GroupMember) {
        if first === member { first = nil } else { others[ObjectIdentifier(member)] = nil }
    }

    /// The members that wait, taken out: the first, and the others (an array only when there are some).
    func takeMembers() -> (first: GroupMember?, others: [GroupMember]) {
        let taken = (first, others.isEmpty ? [] : Array(others.values))
        first = nil
        if !others.isEmpty { others = [:] }
        return taken
    }
}
