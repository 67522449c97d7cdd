import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call of a ``CallGroup``: what it shares its exchanges with, and its own deadline, watched while it
/// waits for an exchange (``AttemptWatch``).
final class GroupMember: PlacedAttempt, @unchecked Sendable {
    // @unchecked: `next`, `transfer`, `continuation`, `leftWith` and `departed` are guarded by the lock of `groups`.
    let group: CallGroup
    /// The groups its group is one of.
    var groups: CallGroups { group.groups }
    /// The account its requests are sent for (see ``CallGroupKey``): its group's (a key's account is part of it).
    var account: (partition: String?, epoch: Int) { (group.key.account, group.key.accountEpoch) }
    /// The call's deadline, from its start.
    let deadline: Deadline
    /// It entered a group in flight (it did not start it). (After the deadline, in its padding: every
    /// queued call holds a member.)
    let joined: Bool
    /// It left an exchange, or the group before it attached, with its call's ending error (see
    /// ``CallGroups/detach(_:with:)``): it never sends again. (Beside `joined`, in the same padding.)
    var departed = false
    /// The request the endpoint built.
    let built: URLRequest
    /// When the call began.
    let started: DispatchTime
    /// The group's exchange its next send may share first.
    var next = 0
    /// The exchange it waits for, while it does.
    var transfer: SharedTransfer?
    var continuation: UnsafeContinuation<(Data, HTTPURLResponse), any Error>?
    /// Why it left before it attached (its deadline passed first): its next send throws it.
    var leftWith: LeftWith?
    /// The values decoded from the answer it got last, when other members share that answer.
    var answeredBy: SharedDecodings?
    /// Its place in the heap of the ``AttemptWatch`` that watches it (see ``PlacedAttempt``), under the watch's lock.
    var watchSlot = 0

    init(
        group: CallGroup, joined: Bool, deadline: Deadline, built: URLRequest, started: DispatchTime
    ) {
        self.group = group
        self.joined = joined
        self.deadline = deadline
        self.built = built
        self.started = started
    }

    /// Its deadline passed (``AttemptWatch``): it leaves the exchange it waits for, the others wait on.
    func expire() {
        groups.detach(self, with: deadline.exceeded)
    }
}

/// Why a ``GroupMember`` left before it attached. Boxed: a ``NetworkError`` is 90 bytes, and every member
/// holds the place for one.
indirect enum LeftWith {
    case error(NetworkError)

    var error: NetworkError {
        switch self {
        case .error(let error): return error
        }
    }
}
