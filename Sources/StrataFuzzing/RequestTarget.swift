import StrataContext
import StrataSamples
import StrataServer
import StrataStore
import StrataSQLite
import StrataWire

/// Any request after a valid hello: the input is a `ClientFrame` payload,
/// decoded, checked and run as a connection runs it, against the Books &
/// Feedback sample in memory stores (seeded with a few objects, made anew
/// every ``RequestTarget/runsPerContainer`` runs so it does not grow
/// without end).
///
/// Invariants: every refusal is a documented status with a message, never
/// an unexpected internal error (INTERNAL with no Strata code) and never a
/// file-system path.
enum RequestTarget {
    static let runsPerContainer = 2000

    /// The probe and how many runs it has served.
    private actor State {
        private var probe: RequestProbe?
        private var container: PersistentContainer?
        private var runs = 0

        func current() async throws -> RequestProbe {
            if let probe, runs < RequestTarget.runsPerContainer {
                runs += 1
                return probe
            }
            try? await container?.close()
            let container = try await PersistentContainer(
                model: BooksSample.model,
                storeDescriptions: [.inMemory(configuration: "Book"), .inMemory(configuration: "Feedback")], factory: .standard,
                transformers: BooksSample.transformers,
                transientRules: BooksSample.transientRules,
                rowCacheCapacity: 100
            )
            let probe = RequestProbe(coordinator: container.coordinator)
            _ = await probe.run(SeedRequests.seed)
            self.container = container
            self.probe = probe
            runs = 1
            return probe
        }
    }

    private static let state = State()

    static func run(_ input: [UInt8]) async throws(FuzzFinding) {
        let probe: RequestProbe
        do {
            probe = try await state.current()
        } catch {
            throw FuzzFinding(.request, "the sample container did not open: \(error)")
        }
        // The event loop's reading of a save of inserts agrees with the
        // full path's.
        if let disagreement = probe.checkInsertScan(payload: input).disagreement {
            throw FuzzFinding(.request, "the insert scan read a frame otherwise than the decoder: \(disagreement): \(input)")
        }
        let outcome = await probe.run(payload: input)
        guard let status = outcome.status else { return }
        if status.code == .ok {
            throw FuzzFinding(.request, "a final status of OK was sent explicitly")
        }
        if status.code == .internal, status.strataCode == 0 {
            throw FuzzFinding(.request, "unexpected internal error: \(status.message)")
        }
        if status.message.isEmpty {
            throw FuzzFinding(.request, "a refusal (\(status.code)) without a message")
        }
        if status.message.contains("/tmp/") || status.message.contains("/var/") {
            throw FuzzFinding(.request, "a path in an answer: \(status.message)")
        }
    }
}
