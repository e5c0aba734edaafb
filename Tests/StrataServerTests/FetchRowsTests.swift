import Foundation
import StrataClient
import StrataModel
@testable import StrataServer
import StrataWire
import Testing

/// A fetch that needs no context is answered from the store's rows,
/// encoded directly; one that names a fetched property goes through a
/// context. Both give the same objects, batches and counts.
@Suite("Fetches answered from rows", .serialized, .timeLimit(.minutes(1)))
struct FetchRowsTests {
    @Test("Rows encoded directly equal the context's answer: every attribute kind, batches, counts, empty results")
    func rowsEqualTheContextsAnswer() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        defer { Task { await client.close() } }
        var inserts: [Strata_V1_InsertedObject] = []
        for index in 0..<23 {
            var insert = Wire.insertBook("b\(index)", title: index % 2 == 0 ? "Book \(index) with a longer title" : "B\(index)", pages: Int64(index % 7), price: "\(index).25")
            if index % 3 == 0 {
                insert.values["publishDate"] = PropertyValue.date(Date(timeIntervalSinceReferenceDate: Double(index) * 1000.5)).wire
                insert.values["coverColor"] = PropertyValue.binary(Data([UInt8(index), 0, 255])).wire
            }
            if index % 5 == 0 { insert.values["author"] = PropertyValue.null.wire }
            inserts.append(insert)
        }
        _ = try await client.save(Wire.save(inserts: inserts))
        for (predicate, batchSize, limit) in [("", 0, 0), ("pages >= 2", 4, 0), ("pages == 3", 5, 0), ("pages > 100", 3, 0), ("", 7, 21), ("pages < 6", 1, 0)] {
            var direct = Wire.fetch("Book", predicate, sort: ["pages", "title"])
            direct.batchSize = UInt32(batchSize)
            direct.limit = UInt32(limit)
            // Naming a fetched property takes the context's path.
            var viaContext = direct
            viaContext.includeFetched = ["feedbackList"]
            let rows = try await batches(client, direct)
            var context = try await batches(client, viaContext)
            for index in context.indices {
                for object in context[index].objects.indices { context[index].objects[object].fetched = [:] }
            }
            #expect(rows == context, "predicate '\(predicate)', batch size \(batchSize), limit \(limit)")
            #expect(rows.last?.count == UInt64(rows.reduce(0) { $0 + $1.objects.count }))
        }
        try await server.stop()
    }

    @Test("A batch past the frame limit is RESOURCE_EXHAUSTED as it is encoded; smaller batches of the same rows are served")
    func aBatchPastTheFrameLimitIsRefused() async throws {
        let server = try await TestServer.start { $0.maxFrameBytes = 65536 }
        let client = server.client()
        defer { Task { await client.close() } }
        let inserts = (0..<40).map { index in
            var insert = Wire.insertBook("b\(index)", title: "Big \(index)", pages: 1)
            insert.values["coverColor"] = PropertyValue.binary(Data(repeating: UInt8(index), count: 4000)).wire
            return insert
        }
        for start in stride(from: 0, to: inserts.count, by: 10) {
            _ = try await client.save(Wire.save(inserts: Array(inserts[start..<start + 10])))
        }
        var whole = Wire.fetch("Book", "pages == 1")
        whole.batchSize = UInt32.max
        do {
            _ = try await client.fetch(whole)
            Issue.record("a 160 KB batch was answered under a 64 KiB frame limit")
        } catch let error as StrataClientError {
            #expect(error.code == .resourceExhausted)
            // Refused while it was encoded (the answer was not whole yet),
            // not once built: a batch is never built past the limit.
            #expect(error.message.contains("at least"), "\(error.message)")
        }
        var paged = whole
        paged.batchSize = 10
        #expect(try await client.fetch(paged).objects.count == 40)
        try await server.stop()
    }

    private func batches(_ client: StrataClient, _ request: Strata_V1_FetchRequest) async throws -> [Strata_V1_FetchBatch] {
        var result: [Strata_V1_FetchBatch] = []
        for try await batch in try await client.fetchBatches(request) { result.append(batch) }
        return result
    }
}
