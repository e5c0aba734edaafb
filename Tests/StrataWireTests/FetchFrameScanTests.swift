import Foundation
import NIOCore
import StrataWire
import SwiftProtobuf
import Testing

/// ``FetchFrameScan`` reads a plain fetch exactly as SwiftProtobuf decodes
/// it, and declines everything else (so the caller decodes it).
@Suite("Fetch frame scan")
struct FetchFrameScanTests {
    private static func bytes(_ frame: Strata_V1_ClientFrame) throws -> [UInt8] {
        try frame.serializedBytes()
    }

    /// `fetch`'s bytes with its map entries in key order (doubles, NaNs
    /// among them, compared by their bits).
    private static func canonical(_ fetch: Strata_V1_FetchRequest) -> [UInt8]? {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        return try? fetch.serializedBytes(options: options)
    }

    /// The scan of `bytes`, checked against the decoder: whenever the scan
    /// answers, the decoder decodes the same fetch and request ID.
    private static func checkedScan(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> FetchFrameScan? {
        guard let scan = FetchFrameScan(scanning: ByteBuffer(bytes: bytes)) else { return nil }
        let decoded = try? Strata_V1_ClientFrame(serializedBytes: bytes)
        #expect(decoded?.requestID == scan.requestID, sourceLocation: sourceLocation)
        #expect(decoded.map { canonical($0.fetch) } == canonical(scan.fetch), sourceLocation: sourceLocation)
        if case .fetch? = decoded?.request {} else { Issue.record("scanned a frame that is not a fetch", sourceLocation: sourceLocation) }
        return scan
    }

    private static func variable(_ kind: Strata_V1_Value.OneOf_Kind?) -> Strata_V1_VariableValue {
        var value = Strata_V1_Value()
        value.kind = kind
        return .with { $0.value = value }
    }

    /// A fetch with every field the scan reads, varied by `round`.
    private static func fetch(_ round: Int) -> Strata_V1_ClientFrame {
        .with { frame in
            if round % 5 != 0 { frame.requestID = UInt64(round) * 104_729 }
            frame.fetch = .with { fetch in
                fetch.entity = round % 6 == 0 ? "" : "Book"
                if round % 2 == 0 { fetch.predicate = "pages >= $LOW AND pages <= $HIGH AND title != 'é'" }
                if round % 3 != 0 {
                    fetch.variables["LOW"] = variable(.integer(Int64(round) - 100))
                    fetch.variables["HIGH"] = variable(.double(Double(round) / 3))
                    if round % 4 == 0 { fetch.variables["U"] = variable(.uuid(Data(repeating: UInt8(round & 0xFF), count: 16))) }
                    if round % 7 == 0 { fetch.variables["S"] = variable(.string("naïve")) }
                    if round % 11 == 0 { fetch.variables[""] = Strata_V1_VariableValue() }
                    if round % 13 == 0 { fetch.variables["N"] = variable(nil) }
                }
                fetch.sort = (0..<(round % 3)).map { i in
                    .with { $0.key = i == 0 ? "pages" : "title"; $0.descending = (round + i) % 2 == 0; $0.caseInsensitive = i == 1 }
                }
                if round % 4 != 1 { fetch.limit = UInt32(round % 50) + (round % 17 == 0 ? UInt32.max - 100 : 0) }
                if round % 5 == 2 { fetch.offset = UInt32(round) }
                switch round % 4 {
                case 1: fetch.resultType = .count
                case 2: fetch.resultType = .objectIds
                case 3: fetch.resultType = .UNRECOGNIZED(9)
                default: break
                }
                fetch.excludeSubentities = round % 8 == 3
                if round % 9 != 0 { fetch.batchSize = UInt32(round % 200) }
            }
        }
    }

    @Test("Plain fetches read as SwiftProtobuf decodes them")
    func matchesDecoding() throws {
        for round in 0..<200 {
            let frame = Self.fetch(round)
            let scan = try #require(Self.checkedScan(try Self.bytes(frame)), "round \(round)")
            #expect(scan.fetch == frame.fetch)
            #expect(scan.requestID == frame.requestID)
        }
    }

    @Test("Anything but a plain fetch is left to the decoder")
    func declinesTheRest() throws {
        let plain = Strata_V1_ClientFrame.with { $0.requestID = 3; $0.fetch = .with { $0.entity = "Book"; $0.limit = 20 } }
        let declined: [(String, Strata_V1_ClientFrame)] = [
            ("a list variable", .with { $0.requestID = 1; $0.fetch = .with { $0.variables["L"] = .with { $0.list = .with { $0.values = [.with { $0.integer = 1 }] } } } }),
            ("an object variable", .with { $0.requestID = 1; $0.fetch = .with { $0.variables["O"] = .with { $0.object = .with { $0.id = "strata://S/Book/p1" } } } }),
            ("a to-many variable", .with { $0.requestID = 1; $0.fetch = .with { $0.variables["T"] = .with { $0.value = .with { $0.objects = .with { $0.ids = ["a"] } } } } }),
            ("fetched properties named", .with { $0.requestID = 1; $0.fetch = .with { $0.includeFetched = ["feedback"] } }),
            ("relationships named", .with { $0.requestID = 1; $0.fetch = .with { $0.includeRelationships = ["author"] } }),
            ("a store named", .with { $0.requestID = 1; $0.fetch = .with { $0.storeID = "S" } }),
            ("a save", .with { $0.requestID = 1; $0.save = .with { $0.author = "a" } }),
            ("no request", .with { $0.requestID = 1 }),
        ]
        for (why, frame) in declined {
            #expect(FetchFrameScan(scanning: ByteBuffer(bytes: try Self.bytes(frame))) == nil, "\(why)")
        }
        let bytes = try Self.bytes(plain)
        #expect(Self.checkedScan(bytes) != nil)
        let body = Array(bytes.dropFirst(4))   // FetchRequest body after 08 03 6A len
        // Whether the decoder reads each: a frame it reads proves that the
        // scan declined it for the reason named, not for being malformed.
        let cases: [(String, [UInt8], decodes: Bool)] = [
            ("a fetch given twice", bytes + bytes.dropFirst(2), true),
            ("an unknown top-level field", bytes + [0x98, 0x06, 0x01], true),
            ("an unknown field in the fetch", [0x08, 0x03, 0x6A, UInt8(body.count + 2)] + body + [0x68, 0x01], true),
            ("a limit past 32 bits", [0x08, 0x03, 0x6A, 0x06, 0x28, 0x80, 0x80, 0x80, 0x80, 0x10], true),
            ("a result type past int32", [0x08, 0x03, 0x6A, 0x06, 0x38, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], true),
            ("a limit with the wrong wire type", [0x08, 0x03, 0x6A, 0x05, 0x2D, 0x01, 0x00, 0x00, 0x00], true),
            ("an unknown field in a sort key", [0x08, 0x03, 0x6A, 0x04, 0x22, 0x02, 0x20, 0x01], true),
            // VariableValue { value { integer 1 }, value { boolean true } }: merged by the decoder.
            ("a variable with two values", [0x08, 0x03, 0x6A, 0x0F, 0x1A, 0x0D, 0x0A, 0x01, 0x58, 0x12, 0x08, 0x0A, 0x02, 0x08, 0x02, 0x0A, 0x02, 0x28, 0x01], true),
            ("a predicate that is not UTF-8", [0x08, 0x03, 0x6A, 0x03, 0x12, 0x01, 0xC3], false),
            ("a truncated frame", Array(bytes.dropLast()), false),
        ]
        for (why, damaged, decodes) in cases {
            #expect(FetchFrameScan(scanning: ByteBuffer(bytes: damaged)) == nil, "\(why)")
            #expect(((try? Strata_V1_ClientFrame(serializedBytes: damaged)) != nil) == decodes, "\(why)")
        }
    }

    @Test("Damaged frames are either declined or read as the decoder reads them")
    func damagedFrames() throws {
        let base = try Self.bytes(Self.fetch(4))
        let variants = FrameDamage.variants(of: base)
        let scanned = variants.filter { Self.checkedScan($0) != nil }.count
        // Many damaged frames still read (a changed value or name).
        #expect(variants.count > 1000 && scanned > 100)
    }
}
