import Dispatch
import Foundation

/// What a call brings to its pipeline when its first exchange's slot was taken before the pipeline
/// started (see ``NetworkProvider/takesSlotFirst(_:built:interceptor:)``): the wait happened where little
/// is held — the caller's own task, or a shared exchange's group with no task at all — so a queued call
/// keeps only a small frame, not the pipeline's.
struct CallStart: Sendable {
    /// The call's context: the monitors were told its request was built, and its wait in the queue.
    let context: RequestContext
    /// When the call started (its duration counts from here, the wait included).
    let started: DispatchTime
    /// The first exchange's slot, or the error the call left the queue with (its cancellation, its
    /// deadline): the first attempt throws it as its own wait's.
    let slot: Result<CallSlot, any Error>

}
