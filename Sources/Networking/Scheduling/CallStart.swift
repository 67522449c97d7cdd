import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a call brings to its pipeline when its first exchange was settled before the pipeline started
/// (see ``NetworkProvider/takesSlotFirst(_:built:interceptor:)``): the wait happened where little is held —
/// the caller's own small frame, with no task for a shared exchange — so a queued call keeps only a small
/// frame, not the pipeline's.
struct CallStart: Sendable {
    /// The call's context: the monitors were told its request was built, and its wait in the queue.
    let context: RequestContext
    /// When the call started (its duration counts from here, the wait included).
    let started: DispatchTime
    /// The first exchange's slot, its answer, or the error the wait ended with.
    let first: FirstSend
}

/// How a call's first send was settled before its pipeline (see ``CallStart``).
enum FirstSend: @unchecked Sendable {
    // @unchecked: `Data` and `HTTPURLResponse` are handed on once, never mutated.
    /// The slot for sending it was taken.
    case slot(CallSlot)
    /// The exchange it shared (see ``CallGroups``) answered.
    case answered(Data, HTTPURLResponse)
    /// The wait ended with this error (its cancellation, its deadline, the shared exchange's failure): the
    /// first attempt throws it as its own.
    case failed(any Error)

    /// Gives back a slot taken but not used.
    func releaseUnused() {
        if case .slot(let slot) = self { slot.release() }
    }
}
