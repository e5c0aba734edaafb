import Foundation
import InMemoryTracing
import Instrumentation
import StrataClient
import StrataWire
import Testing
import Tracing

/// Requests make spans once a tracer is bootstrapped (the only test of the
/// process that bootstraps one).
@Suite("Tracing")
struct TracingTests {
    @Test("Each request is a server span named after its operation, with its entity and, on failure, an error status")
    func spans() async throws {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        let server = try await TestServer.start()
        let client = server.client()
        _ = try await client.count("Book")
        _ = try await client.save(Wire.save(inserts: [Wire.insertBook("b", title: "Traced")]))
        _ = try? await client.fetch(Wire.fetch("Nope"))
        await client.close()
        try await server.stop()
        let spans = tracer.finishedSpans
        let fetches = spans.filter { $0.operationName == "strata.fetch" }
        #expect(fetches.contains { $0.attributes["strata.entity"]?.toSpanAttribute() == .string("Book") && $0.status == nil })
        #expect(fetches.contains { $0.attributes["strata.entity"]?.toSpanAttribute() == .string("Nope") && $0.status?.code == .error })
        let saves = spans.filter { $0.operationName == "strata.save" }
        #expect(saves.contains { $0.kind == .server && $0.attributes["strata.entity"]?.toSpanAttribute() == .string("Book") })
    }
}
