import NIOCore
import StrataModel
import StrataWire
import SwiftProtobuf
import Testing

/// ``RefreshFrameScan`` reads a plain refresh exactly as SwiftProtobuf
/// decodes it, and declines everything else (so the caller decodes it).
@Suite("Refresh frame scan")
struct RefreshFrameScanTests {
    private static func scan(_ frame: Strata_V1_ClientFrame) throws -> RefreshFrameScan? {
        RefreshFrameScan(scanning: ByteBuffer(bytes: try frame.serializedBytes() as [UInt8]))
    }

    @Test("Plain refreshes read as SwiftProtobuf decodes them")
    func matchesDecoding() throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let frame = Strata_V1_ClientFrame.with {
                $0.requestID = round % 7 == 0 ? UInt64.random(in: 0...UInt64.max, using: &random) : UInt64(round)
                $0.refresh = Strata_V1_RefreshRequest.with {
                    $0.ids = (0..<(round % 5)).map { "strata://S/Book/p\($0 * 1000 + round)é" }
                    if round % 3 == 0 { $0.includeFetched = ["feedbackList"] }
                    if round % 4 == 0 { $0.includeRelationships = ["x", "y"] }
                    $0.skipFetched = round % 2 == 0
                }
            }
            let scanned = try #require(try Self.scan(frame), "round \(round)")
            #expect(scanned == RefreshFrameScan(
                requestID: frame.requestID, ids: frame.refresh.ids,
                namesFetched: !frame.refresh.includeFetched.isEmpty,
                namesRelationships: !frame.refresh.includeRelationships.isEmpty,
                skipFetched: frame.refresh.skipFetched
            ))
        }
    }

    @Test("Unknown fields inside the refresh are skipped, as a decoder skips them")
    func unknownInnerFields() throws {
        // RefreshRequest { ids: "a", field 9 varint 5, field 10 bytes "zz" }
        let inner: [UInt8] = [0x0A, 0x01, 0x61, 0x48, 0x05, 0x52, 0x02, 0x7A, 0x7A]
        let payload: [UInt8] = [0x08, 0x03, 0x7A, UInt8(inner.count)] + inner
        let decoded = try Strata_V1_ClientFrame(serializedBytes: payload)
        #expect(decoded.refresh.ids == ["a"])
        #expect(RefreshFrameScan(scanning: ByteBuffer(bytes: payload)) == RefreshFrameScan(requestID: 3, ids: ["a"]))
    }

    @Test("Other requests, merged refreshes, bad UTF-8 and malformed bytes are declined")
    func declines() throws {
        #expect(try Self.scan(Strata_V1_ClientFrame.with { $0.requestID = 1; $0.save = Strata_V1_SaveRequest() }) == nil)
        #expect(try Self.scan(Strata_V1_ClientFrame.with { $0.requestID = 1 }) == nil)
        let once: [UInt8] = try Strata_V1_ClientFrame.with { $0.requestID = 2; $0.refresh = .with { $0.ids = ["a"] } }.serializedBytes()
        // The refresh field twice: protobuf merges the two messages.
        #expect(RefreshFrameScan(scanning: ByteBuffer(bytes: once + once.dropFirst(2))) == nil)
        // An ID that is not UTF-8 (SwiftProtobuf refuses the frame).
        let badID: [UInt8] = [0x08, 0x01, 0x7A, 0x03, 0x0A, 0x01, 0xFF]
        #expect(RefreshFrameScan(scanning: ByteBuffer(bytes: badID)) == nil)
        #expect((try? Strata_V1_ClientFrame(serializedBytes: badID)) == nil)
        // A fetched-property or relationship name that is not UTF-8, and
        // an unknown field whose tag is past 32 bits: SwiftProtobuf refuses
        // both frames (found by the frame fuzzer).
        let badNames: [[UInt8]] = [
            [0x08, 0x01, 0x7A, 0x03, 0x12, 0x01, 0xA2],
            [0x08, 0x01, 0x7A, 0x03, 0x1A, 0x01, 0xFF],
            [0x08, 0x01, 0x7A, 0x06, 0x80, 0x80, 0x80, 0x80, 0x10, 0x01],
        ]
        for bytes in badNames {
            #expect(RefreshFrameScan(scanning: ByteBuffer(bytes: bytes)) == nil, "\(bytes)")
            #expect((try? Strata_V1_ClientFrame(serializedBytes: bytes)) == nil, "\(bytes)")
        }
        // Every truncation either is declined or reads as the decoder reads it.
        for length in 0..<once.count {
            let prefix = Array(once[..<length])
            guard let scanned = RefreshFrameScan(scanning: ByteBuffer(bytes: prefix)) else { continue }
            let decoded = try Strata_V1_ClientFrame(serializedBytes: prefix)
            #expect(scanned.ids == decoded.refresh.ids && scanned.requestID == decoded.requestID)
        }
        #expect(RefreshFrameScan(scanning: ByteBuffer(bytes: [0xFF, 0xFF, 0xFF])) == nil)
    }

    @Test("A refresh of one ID hands over its bytes, with the same fields, and declines the rest")
    func soleID() throws {
        let text = { (bytes: UnsafeRawBufferPointer) in ObjectID(uriRepresentation: String(decoding: bytes, as: UTF8.self)) }
        var random = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let frame = Strata_V1_ClientFrame.with {
                $0.requestID = round % 7 == 0 ? UInt64.random(in: 0...UInt64.max, using: &random) : UInt64(round)
                $0.refresh = Strata_V1_RefreshRequest.with {
                    $0.ids = (0..<(round % 4)).map { "strata://S/Book/p\($0 * 1000 + round)" }
                    if round % 3 == 0 { $0.includeFetched = ["feedbackList"] }
                    if round % 5 == 0 { $0.includeRelationships = ["x"] }
                    $0.skipFetched = round % 2 == 0
                }
            }
            let payload = ByteBuffer(bytes: try frame.serializedBytes() as [UInt8])
            let full = try #require(RefreshFrameScan(scanning: payload))
            let sole = RefreshFrameScan.scanningSoleID(payload, text)
            if frame.refresh.ids.count == 1 {
                let (scan, id) = try #require(sole, "round \(round)")
                #expect(id.uriRepresentation == frame.refresh.ids[0])
                var expected = full
                expected.ids = []
                #expect(scan == expected)
            } else {
                #expect(sole == nil, "round \(round): \(frame.refresh.ids.count) IDs")
            }
        }
        // What `read` declines is declined; so is what the scan declines.
        let one = ByteBuffer(bytes: try Strata_V1_ClientFrame.with { $0.requestID = 2; $0.refresh = .with { $0.ids = ["a"] } }.serializedBytes() as [UInt8])
        #expect(RefreshFrameScan.scanningSoleID(one) { _ in nil } == nil)
        #expect(RefreshFrameScan.scanningSoleID(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF]), text) == nil)
        let save = ByteBuffer(bytes: try Strata_V1_ClientFrame.with { $0.requestID = 1; $0.save = Strata_V1_SaveRequest() }.serializedBytes() as [UInt8])
        #expect(RefreshFrameScan.scanningSoleID(save, text) == nil)
    }
}
