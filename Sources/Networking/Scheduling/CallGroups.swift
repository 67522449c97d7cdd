import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The identical calls in flight of one provider, by ``CallGroupKey``, and the exchanges they share.
///
/// A group is the calls made with the same key while one of them is still in its pipeline. Each caller runs
/// its own pipeline in its own task (its cache consultation first, its own adapt, validation, retriers,
/// decoding); only the `URLSessionTask` is shared: at each send a member looks among its group's exchanges
/// (``SharedTransfer``) for the one of its request, starts it when there is none, and waits for its answer
/// with a continuation of its own. No task is made for an exchange: URLSession drives it through the
/// session delegate.
///
/// - The group's exchanges are kept in the order they were started, and a member's sends go through them
///   in that order: its n-th send may only share an exchange later than the one its previous send shared,
///   and shares the first such one of its request, even one that already ended (its answer is kept while
///   the group lives). So the resend after a 401 (its token refreshed once, by the interceptor's single
///   flight) is one exchange for the whole group, whenever each member gets to it; so is a retry.
/// - A member that is cancelled, or whose deadline passes, leaves the exchange at once with its error; the
///   exchange is cancelled (or leaves the queue for its slot) when its last waiting member left. A member
///   that comes later never shares an exchange that was cancelled so.
/// - The group ends when its last member's call ended: a call made after that starts a new group.
final class CallGroups: @unchecked Sendable {
    // @unchecked: `groups` and the mutable state of the groups, members and exchanges are guarded by `lock`.
    private let lock = NSLock()
    private var groups: [CallGroupKey: CallGroup] = [:]

    /// A member for a call with `key`: of the group in flight (it joined) or of a new one.
    func enter(key: CallGroupKey, deadline: Deadline, built: URLRequest, started: DispatchTime) -> GroupMember {
        lock.lock()
        defer { lock.unlock() }
        if let group = groups[key] {
            group.members += 1
            return GroupMember(group: group, joined: true, deadline: deadline, built: built, started: started)
        }
        let group = CallGroup(key: key, groups: self)
        groups[key] = group
        return GroupMember(group: group, joined: false, deadline: deadline, built: built, started: started)
    }

    /// `member`'s call ended: the group ends with its last member, which cancels the group's exchanges still
    /// in flight (or takes them out of the queue): no caller is left to share them.
    func leave(_ member: GroupMember) {
        lock.lock()
        let group = member.group
        group.members -= 1
        if member.departed { group.departing -= 1 }
        guard group.members == 0 else {
            lock.unlock()
            return
        }
        // One look-up (a key compares its URL and headers): a group replaced meanwhile is put back.
        if let removed = groups.removeValue(forKey: group.key), removed !== group { groups[group.key] = removed }
        let abandoned = abandonUnfinished(of: group)
        lock.unlock()
        Self.stop(abandoned, because: .cancelled)
    }

    /// Marks the exchanges of `group` that have not ended abandoned (no member will ever wait for them), and
    /// returns them with their tasks, if they started. Call with the lock held.
    private func abandonUnfinished(of group: CallGroup) -> [(handle: TaskHandle?, transfer: SharedTransfer)] {
        var abandoned: [(handle: TaskHandle?, transfer: SharedTransfer)] = []
        var index = 0
        while let transfer = group.transfer(at: index) {
            index += 1
            guard transfer.outcome == nil, !transfer.abandoned else { continue }
            transfer.abandoned = true
            abandoned.append((transfer.handle, transfer))
        }
        return abandoned
    }

    /// Stops the exchanges ``abandonUnfinished(of:)`` returned: cancels the task of one that started; one
    /// that did not leaves the queue with `reason` (``SlotWaiter/leave(because:)``: at once if it waits, and
    /// before it is queued if it is on its way there; nothing if it was granted its slot, whose task
    /// ``started(_:handle:)`` then cancels). Call without the lock.
    private static func stop(_ abandoned: [(handle: TaskHandle?, transfer: SharedTransfer)], because reason: NetworkError) {
        for (handle, transfer) in abandoned {
            if let handle { handle.cancel() } else { transfer.leave(because: reason) }
        }
    }

    /// How a member's send went in.
    enum Attachment {
        /// It started `transfer`: the caller starts its `URLSessionTask`.
        case started(SharedTransfer)
        /// It shares an exchange in flight, or already had its answer (its continuation was resumed).
        case shared
    }

    /// `member` sends `send`: shares its group's exchange of that request (see the type's comment) or
    /// starts one. `continuation` is resumed with the exchange's answer.
    func attach(_ member: GroupMember, send: SharedSend, by provider: NetworkProvider, continuation: UnsafeContinuation<(Data, HTTPURLResponse), any Error>)
        -> Attachment
    {
        let key = send.key
        lock.lock()
        if let error = member.leftWith?.error {
            member.leftWith = nil
            lock.unlock()
            continuation.resume(throwing: error)
            return .shared
        }
        let group = member.group
        var index = member.next
        while let transfer = group.transfer(at: index) {
            index += 1
            guard !transfer.abandoned, transfer.key == key else { continue }
            member.next = index
            if let outcome = transfer.outcome {
                member.answeredBy = transfer.sharedDecodings()
                lock.unlock()
                continuation.resume(with: outcome)
                return .shared
            }
            transfer.add(member)
            member.transfer = transfer
            member.continuation = continuation
            lock.unlock()
            return .shared
        }
        let transfer = SharedTransfer(send, provider: provider)
        group.append(transfer)
        member.next = index + 1
        transfer.add(member)
        member.transfer = transfer
        member.continuation = continuation
        lock.unlock()
        return .started(transfer)
    }

    /// `member` leaves the exchange it waits for with `error` (cancelled, or its deadline passed): resumed
    /// at once. Its call ends with that error, so it never sends again: it departs. When every member of the
    /// group has departed, the group's exchanges that have not ended are cancelled (or taken out of the
    /// queue) at once — not when the last of those calls has unwound, by which time the queue may have
    /// granted one a slot and sent it for nobody. While a member that has not departed may still reach an
    /// exchange (say, one that joined the group and still waits for the network before it sends), the
    /// exchange goes on, and ``leave(_:)`` of the group's last member cancels it if nobody came. Before it
    /// attached, the error is kept for its next send.
    func detach(_ member: GroupMember, with error: NetworkError) {
        lock.lock()
        let group = member.group
        if !member.departed {
            member.departed = true
            group.departing += 1
        }
        let continuation = member.continuation
        if let transfer = member.transfer, continuation != nil {
            member.continuation = nil
            member.transfer = nil
            transfer.remove(member)
        } else if member.leftWith == nil {
            member.leftWith = .error(error)
        }
        // The group still counts its departed members (their `leave` comes once their call ended).
        let abandoned = group.members - group.departing <= 0 ? abandonUnfinished(of: group) : []
        lock.unlock()
        Self.stop(abandoned, because: error)
        continuation?.resume(throwing: error)
    }

    /// `transfer` got its `URLSessionTask` (`handle`): cancelled at once when every member left meanwhile.
    func started(_ transfer: SharedTransfer, handle: TaskHandle) {
        lock.lock()
        transfer.handle = handle
        let abandoned = transfer.abandoned
        lock.unlock()
        if abandoned { handle.cancel() }
    }

    /// The values decoded from the answer `member` got last, when others share that answer (see
    /// ``SharedDecodings``): taken, so that a later send's answer starts with none.
    func decodings(answering member: GroupMember) -> SharedDecodings? {
        lock.lock()
        defer { lock.unlock() }
        let decodings = member.answeredBy
        member.answeredBy = nil
        return decodings
    }

    /// `transfer` ended with `outcome`: kept for the members that come to it later, and handed to those waiting.
    func finish(_ transfer: SharedTransfer, with outcome: Result<(Data, HTTPURLResponse), any Error>) {
        lock.lock()
        transfer.outcome = outcome
        let (first, others) = transfer.takeMembers()
        let single = first?.continuation
        first?.continuation = nil
        first?.transfer = nil
        var handed: [UnsafeContinuation<(Data, HTTPURLResponse), any Error>] = []
        if !others.isEmpty {
            // An answer several members share: what they decode from it is decoded once (SharedDecodings).
            let decodings = transfer.sharedDecodings()
            first?.answeredBy = decodings
            handed.reserveCapacity(others.count)
            for member in others {
                if let continuation = member.continuation { handed.append(continuation) }
                member.continuation = nil
                member.transfer = nil
                member.answeredBy = decodings
            }
        } else {
            first?.answeredBy = nil
        }
        lock.unlock()
        single?.resume(with: outcome)
        for continuation in handed { continuation.resume(with: outcome) }
    }
}

/// The calls with one key while one of them is in its pipeline, and the exchanges they shared so far.
final class CallGroup: @unchecked Sendable {
    // @unchecked: every `var` is guarded by the lock of the ``CallGroups`` that holds it.
    let key: CallGroupKey
    /// The groups it is one of (which hold it while it lives).
    let groups: CallGroups
    /// The members whose call has not ended. (32 bits, as `departing`: the group a malloc size class smaller,
    /// and every queued call starts or joins one.)
    var members: Int32 = 1
    /// Those of them that departed (``CallGroups/detach(_:with:)``): their call is ending, and they never
    /// send again.
    var departing: Int32 = 0
    /// The first exchange: most groups have one only (no array for them).
    private var first: SharedTransfer?
    private var later: [SharedTransfer] = []

    init(key: CallGroupKey, groups: CallGroups) {
        self.key = key
        self.groups = groups
    }

    /// The exchange started `index`-th, if there is one.
    func transfer(at index: Int) -> SharedTransfer? {
        if index == 0 { return first }
        return index - 1 < later.count ? later[index - 1] : nil
    }

    /// Adds the exchange started last.
    func append(_ transfer: SharedTransfer) {
        if first == nil { first = transfer } else { later.append(transfer) }
    }
}

extension Deadline {
    /// A deadline at `expiry` (`nil`: none), which `seconds` after its call began.
    init(seconds: TimeInterval, expiry: DispatchTime?) {
        self.seconds = seconds
        self.expiry = expiry
    }
}
