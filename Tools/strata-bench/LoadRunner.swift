import Foundation
import StrataClient
import StrataWire
import Synchronization

/// Runs the load: `concurrency` workers share `clients` connections and
/// take request numbers from one counter until the count or the duration
/// is reached. Closed loop by default; with a rate, request k is due at
/// start + k / rate and its latency counts from then (no coordinated
/// omission: a stalled server makes later requests late, and that shows).
struct LoadRunner: Sendable {
    let clients: [StrataClient]
    let workload: Workload
    let mix: OperationMix
    let concurrency: Int
    let requestLimit: Int?
    let duration: Duration?
    let rate: Double?
    let shape: LoadShape

    /// Requests finished and failed so far (for the progress line).
    final class Progress: Sendable {
        let done = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        /// Request numbers handed out (the workers' shared counter).
        let issued = Atomic<Int>(0)
    }

    func run(progress: Progress, seed: UInt64) async -> (Recorder, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = duration.map { start + $0 }
        let shape = self.shape
        let recorder = await withTaskGroup(of: Recorder.self) { group in
            for worker in 0..<concurrency {
                let client = clients[worker % clients.count]
                group.addTask {
                    var recorder = Recorder()
                    var random = SplitMix64(seed: seed &+ UInt64(worker) &* 0x9E37_79B9)
                    // Closed loop with a ramp: worker i joins i/concurrency of the way in.
                    if rate == nil, shape.ramp > 0, worker > 0 {
                        try? await Task.sleep(until: start + .seconds(shape.ramp * Double(worker) / Double(concurrency)), clock: clock)
                    }
                    while true {
                        let serial = progress.issued.add(1, ordering: .relaxed).oldValue
                        if let requestLimit, serial >= requestLimit { break }
                        var due = clock.now
                        if rate != nil {
                            due = start + .seconds(shape.due(serial: serial))
                            if let deadline, due >= deadline { break }
                            if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
                        } else if let deadline, due >= deadline {
                            break
                        }
                        let operation = mix.pick(Int(random.next() % UInt64(mix.total)))
                        var failure: String?
                        var message: String?
                        do {
                            try await Self.perform(operation, workload: workload, client: client, random: &random, serial: serial, timeout: shape.timeout)
                        } catch let error as StrataClientError {
                            failure = error.code.name
                            message = error.message
                        } catch is TimedOut {
                            failure = "DEADLINE_EXCEEDED"
                        } catch {
                            failure = "CLIENT_ERROR"
                        }
                        let elapsed = clock.now - due
                        let micros = UInt64(max(0, elapsed.components.seconds)) * 1_000_000 + UInt64(max(0, elapsed.components.attoseconds) / 1_000_000_000_000)
                        recorder.record(operation, micros: micros, error: failure, second: Int((clock.now - start).components.seconds), message: message)
                        progress.done.add(1, ordering: .relaxed)
                        if failure != nil { progress.failed.add(1, ordering: .relaxed) }
                    }
                    return recorder
                }
            }
            var merged = Recorder()
            for await part in group { merged.merge(part) }
            return merged
        }
        return (recorder, clock.now - start)
    }

    /// A request that outlived `--timeout`.
    struct TimedOut: Error {}

    /// Performs one operation, failing with ``TimedOut`` when it takes
    /// longer than `timeout` seconds (the request is abandoned).
    static func perform(_ operation: BenchOperation, workload: Workload, client: StrataClient, random: inout SplitMix64, serial: Int, timeout: Double?) async throws {
        guard let timeout else {
            try await workload.perform(operation, client: client, random: &random, serial: serial)
            return
        }
        // The request's random draws happen here, before the race.
        let (request, target) = workload.request(operation, random: &random, serial: serial)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await workload.send(request, target: target, client: client) }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw TimedOut()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
