import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// The platform-free state machine behind `ManualConnectivity` and the Apple path monitor: what a path
/// report means, and waiters that are never lost.
@Suite("Connectivity: the state machine and ManualConnectivity", SuiteTimeLimit.oneMinute)
struct ConnectivityStateTests {
    @Test("only an unsatisfied path is offline; requiresConnection (an on-demand VPN) is usable")
    func pathReports() {
        let state = ConnectivityState(online: true)   // the monitor's unknown first state: online
        #expect(state.isOnline)
        state.update(.unsatisfied)
        #expect(!state.isOnline)
        state.update(.requiresConnection)
        #expect(state.isOnline)
        state.update(.unsatisfied)
        state.update(.satisfied)
        #expect(state.isOnline)
    }

    @Test("waiting while online returns at once; AlwaysOnline never waits")
    func onlineReturnsAtOnce() async throws {
        try await ManualConnectivity().waitUntilOnline()
        try await AlwaysOnline().waitUntilOnline()
        #expect(AlwaysOnline().isOnline)
    }

    @Test("a transition to online resumes every waiter; going offline resumes none")
    func transitionResumesWaiters() async throws {
        let connectivity = ManualConnectivity(isOnline: false)
        let resumed = Recorder<Int>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await connectivity.waitUntilOnline()
                    resumed.append(index)
                }
            }
            await pollUntil { connectivity.waitingCount == 200 }
            connectivity.set(online: false)   // no transition: nobody resumes
            #expect(resumed.count == 0)
            connectivity.set(online: true)
            try await group.waitForAll()
        }
        #expect(resumed.count == 200)
        #expect(connectivity.waitingCount == 0)
    }

    @Test("no wakeup is lost while the state flips as waiters arrive")
    func noLostWakeups() async throws {
        let connectivity = ManualConnectivity(isOnline: false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<500 {
                group.addTask { try await connectivity.waitUntilOnline() }
            }
            group.addTask {
                for index in 0..<200 {
                    connectivity.set(online: index.isMultiple(of: 2))
                    await Task.yield()
                }
                connectivity.set(online: true)
            }
            try await group.waitForAll()
        }
        #expect(connectivity.waitingCount == 0)
    }

    @Test("cancelling a waiting task ends its wait with CancellationError; the others keep waiting")
    func cancellation() async throws {
        let connectivity = ManualConnectivity(isOnline: false)
        let cancelled = Task { try await connectivity.waitUntilOnline() }
        let kept = Task { try await connectivity.waitUntilOnline() }
        await pollUntil { connectivity.waitingCount == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(connectivity.waitingCount == 1)
        connectivity.set(online: true)
        try await kept.value
    }

    @Test("a task cancelled before it waits does not wait")
    func cancelledBeforeWaiting() async {
        let connectivity = ManualConnectivity(isOnline: false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await connectivity.waitUntilOnline()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(connectivity.waitingCount == 0)
    }
}

/// Returns once `condition` holds, looking again after each short pause (the suite's time limit ends a
/// test whose condition never holds).
func pollUntil(_ condition: @Sendable () -> Bool) async {
    while !condition() {
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
}
