import NIOCore

/// An event loop as a task executor (SE-0417): a task that prefers it runs
/// its nonisolated code on the loop's thread, as the loop's own work. For
/// short tasks started from the loop whose answers go back to it (a small
/// save: decoded and checked, queued for the store's writer, answered), so
/// they take no thread of Swift's cooperative pool and wake none: the only
/// thread switches left are to the writer and back. Actor-isolated code
/// still runs on its actor.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
