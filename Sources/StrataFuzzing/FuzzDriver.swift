import Dispatch
import NIOConcurrencyHelpers

/// Runs targets from synchronous callers (libFuzzer's
/// `LLVMFuzzerTestOneInput`, on a thread of its own, never one of Swift's
/// cooperative pool): the run is a task, the caller waits for it.
public enum FuzzDriver {
    /// Runs one input and crashes on a finding, printing it, so that the
    /// fuzzer saves the input. Call only from a thread that is not part of
    /// Swift's cooperative pool.
    public static func runBlocking(_ target: FuzzTarget, _ input: [UInt8]) {
        do throws(FuzzFinding) {
            // The synchronous targets run right here, without a task.
            if try target.runSynchronously(input) { return }
        } catch {
            // Deliberate: only libFuzzer drivers call this, and a crash is how
            // libFuzzer keeps a finding's input. Servers and tools never do.
            fatalError("fuzz finding: \(error)")
        }
        let result = NIOLockedValueBox<FuzzFinding?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do throws(FuzzFinding) {
                try await target.run(input)
            } catch {
                result.withLockedValue { $0 = error }
            }
            done.signal()
        }
        done.wait()
        if let finding = result.withLockedValue({ $0 }) {
            // Deliberate, as above: the fuzzer's way to keep an input is a
            // crash, with its reason. No server or tool path calls this.
            fatalError("fuzz finding: \(finding)")
        }
    }
}

