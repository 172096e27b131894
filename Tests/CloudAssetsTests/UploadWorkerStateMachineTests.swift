import Testing

@testable import CloudAssets

/// The upload worker's lifecycle, driven without I/O (``UploadQueue/Worker``).
@Suite("Upload worker: lifecycle as a value")
struct UploadWorkerStateMachineTests {
    typealias Worker = UploadQueue.Worker

    @Test("a wake of an idle worker starts it; a round with no wake stops it")
    func wakeStartsAndAQuietRoundStops() {
        var worker = Worker()
        #expect(!worker.isRunning)
        #expect(worker.wake() == .startWorker)
        #expect(worker.isRunning)
        #expect(worker.roundFinished() == .stop)
        #expect(!worker.isRunning)
        #expect(worker.wake() == .startWorker)
    }

    @Test("wakes during a round start nothing new and make the worker look once more, however many")
    func wakesDuringARoundAreFoldedIntoOneMoreRound() {
        var worker = Worker()
        _ = worker.wake()
        #expect(worker.wake() == .none)
        #expect(worker.wake() == .none)
        #expect(worker.roundFinished() == .runAgain)
        #expect(worker.isRunning)
        #expect(worker.roundFinished() == .stop)
    }

    @Test("closed absorbs every event: no start, every round stops, never running again")
    func closedIsFinal() {
        var worker = Worker()
        _ = worker.wake()
        _ = worker.wake()
        worker.close()
        #expect(!worker.isRunning)
        #expect(worker.roundFinished() == .stop)
        #expect(worker.wake() == .none)
        #expect(worker.roundFinished() == .stop)
        #expect(worker.phase == .closed)
    }
}
