import Foundation
import Testing

@testable import Networking

/// The queue itself (``CallSlots``), without a network: which waiting call a freed slot goes to when the
/// provider-wide limit binds across hosts.
@Suite("Scheduling: the queue's order across hosts", SuiteTimeLimit.oneMinute)
struct SchedulingQueueOrderTests {
    /// Queues a waiter named `name` for `host` with `priority`, once the previous ones are queued; returns
    /// its task, which records its name when granted and ends with the line to give the slot back to.
    func queue(
        _ name: String, _ host: String, _ priority: RequestPriority, on slots: CallSlots, granted: Recorder<String>
    ) async -> Task<HostLine, any Error> {
        let before = slots.waitingCount
        let task = Task {
            let waiter = SlotWaiter(priority: priority, slots: slots, deadlineSeconds: .infinity)
            let line = try await withUnsafeThrowingContinuation { continuation in
                _ = slots.enqueue(waiter, for: Origin(URL(string: "https://\(host)/")!), continuation: continuation)
            }
            granted.append(name)
            return line
        }
        await pollUntil { slots.waitingCount == before + 1 }
        return task
    }

    @Test("under the provider-wide limit, a freed slot goes to the highest priority of any host, then to the earliest")
    func acrossHosts() async throws {
        let slots = CallSlots(Scheduling(maximumCalls: 1, maximumCallsPerHost: 1))
        let granted = Recorder<String>()
        var line = try #require(slots.take(Origin(URL(string: "https://a.example.com/")!)))
        var waiting: [String: Task<HostLine, any Error>] = [:]
        for (name, host, priority) in [
            ("b-low", "b.example.com", RequestPriority.low), ("c-normal-1", "c.example.com", .normal), ("b-high", "b.example.com", .high),
            ("d-high", "d.example.com", .high), ("c-normal-2", "c.example.com", .normal),
        ] {
            waiting[name] = await queue(name, host, priority, on: slots, granted: granted)
        }
        for index in 0..<waiting.count {
            slots.release(line)   // one slot in all: each release grants exactly one waiter
            await pollUntil { granted.count == index + 1 }
            #expect(slots.inFlightCount == 1)
            line = try await #require(waiting[granted.all[index]]).value
        }
        #expect(granted.all == ["b-high", "d-high", "c-normal-1", "c-normal-2", "b-low"])
        #expect(slots.waitingCount == 0)
        slots.release(line)
        #expect(slots.inFlightCount == 0)
    }

    @Test("a waiter that got its slot is let go by its line at once, while those behind it still wait (a shared exchange waits itself, holding its call)")
    func grantedWaitersAreLetGo() async throws {
        let slots = CallSlots(Scheduling(maximumCalls: 1, maximumCallsPerHost: 1))
        let origin = Origin(URL(string: "https://a.example.com/")!)
        var line = try #require(slots.take(origin))
        weak var first: SlotWaiter?
        var tasks: [Task<HostLine, any Error>] = []
        for index in 0..<3 {
            let waiter = SlotWaiter(priority: .normal, slots: slots, deadlineSeconds: .infinity)
            if index == 0 { first = waiter }
            tasks.append(
                Task { [waiter] in
                    try await withUnsafeThrowingContinuation { continuation in _ = slots.enqueue(waiter, for: origin, continuation: continuation) }
                })
            await pollUntil { slots.waitingCount == index + 1 }
        }
        slots.release(line)
        line = try await tasks[0].value
        #expect(slots.waitingCount == 2)
        #expect(first == nil)   // the line, which still holds the two behind it, holds it no more
        for task in tasks.dropFirst() {
            slots.release(line)
            line = try await task.value
        }
        slots.release(line)
        #expect(slots.waitingCount == 0 && slots.inFlightCount == 0)
    }

    @Test("a host at its own limit is passed over: the slot goes to a host under its limit, whatever the priorities")
    func hostAtItsLimitIsPassedOver() async throws {
        let slots = CallSlots(Scheduling(maximumCalls: 2, maximumCallsPerHost: 1))
        let granted = Recorder<String>()
        let a = try #require(slots.take(Origin(URL(string: "https://a.example.com/")!)))
        let b = try #require(slots.take(Origin(URL(string: "https://b.example.com/")!)))
        let high = await queue("a-high", "a.example.com", .high, on: slots, granted: granted)
        let low = await queue("c-low", "c.example.com", .low, on: slots, granted: granted)
        slots.release(b)   // a.example.com is still at its limit: c.example.com's call goes
        let c = try await low.value
        #expect(granted.all == ["c-low"])
        slots.release(a)
        let next = try await high.value
        #expect(granted.all == ["c-low", "a-high"])
        slots.release(c)
        slots.release(next)
        #expect(slots.inFlightCount == 0 && slots.waitingCount == 0)
    }

    @Test("within a priority a later exchange of an earlier call (a resend, a retry) goes before the calls that arrived after it, and after those before it")
    func aResendGoesBackToItsCallsPlace() {
        let slots = CallSlots(Scheduling())
        let line = HostLine()
        func waiter(_ arrival: UInt64) -> SlotWaiter {
            let waiter = SlotWaiter(priority: .normal, arrival: arrival, slots: slots, deadlineSeconds: 60)
            waiter.state = .queued
            return waiter
        }
        var queued: [SlotWaiter] = []
        for arrival in [1, 2, 4, 5, 7, 8, 9] as [UInt64] { queued.append(waiter(arrival)) }
        for waiter in queued { line.append(waiter) }
        let first = line.first
        line.removeFirst(queued[0])   // arrival 1 got a slot
        #expect(first === queued[0])
        // Resends, in any order: each goes to its call's place (an equal arrival goes after the one waiting).
        var resends: [SlotWaiter] = []
        for arrival in [6, 3, 10, 1, 5] as [UInt64] { resends.append(waiter(arrival)) }
        for resend in resends { line.append(resend) }
        var order: [SlotWaiter] = []
        while let next = line.first {
            order.append(next)
            line.removeFirst(next)
        }
        #expect(order.map(\.arrival) == [1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10])
        #expect(order[4] === queued[3] && order[5] === resends[4])   // the 5 waiting, then the 5 resent
    }

    @Test("a request's origin, remembered for a run of requests to one scheme and authority, is the origin of its URL (RFC 6454 §4)")
    func originsOfRequestsInARow() throws {
        let slots = CallSlots(Scheduling())
        let recent = RecentOrigin()   // an AuthInterceptor's, for its scope checks
        let urls = [
            "https://api.example.com/v1/a", "https://api.example.com/v1/b?x=1", "https://API.example.com/v1/c",
            "https://api.example.com:443/v1/d", "http://api.example.com/v1/e", "https://api.example.com:8443/f",
            "https://user:secret@api.example.com/g", "https://api.example.com#frag", "https://api.example.com?q",
            "https://images.example.com/h", "https://api.example.com/v1/a", "mailto:someone@example.com", "https://api.example.com/i",
        ]
        for text in urls + urls.reversed() {
            let url = try #require(URL(string: text))
            #expect(slots.origin(of: url) == Origin(url), "\(text)")
            #expect(recent.origin(of: url) == Origin(url), "\(text)")
        }
        // Two spellings of one origin count against one limit: one line.
        let (a, b) = (try #require(URL(string: "https://api.example.com/a")), try #require(URL(string: "https://API.EXAMPLE.COM:443/b")))
        let lower = try #require(slots.take(slots.origin(of: a)))
        let upper = try #require(slots.take(slots.origin(of: b)))
        #expect(lower === upper && lower.inFlight == 2)
    }
}
