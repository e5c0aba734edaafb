import Foundation
import NIOCore
import StrataWire
import SwiftProtobuf
import Testing

/// ``SaveFrameScan`` reads a save of inserts exactly as SwiftProtobuf
/// decodes it, and declines everything else (so the caller decodes it).
@Suite("Save frame scan")
struct SaveFrameScanTests {
    private static func bytes(_ frame: Strata_V1_ClientFrame) throws -> [UInt8] {
        try frame.serializedBytes()
    }

    /// The scan of `bytes`, checked against the decoder: whenever the scan
    /// answers, the decoder decodes the same save and request ID.
    private static func checkedScan(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> SaveFrameScan? {
        guard let scan = SaveFrameScan(scanning: ByteBuffer(bytes: bytes)) else { return nil }
        let decoded = try? Strata_V1_ClientFrame(serializedBytes: bytes)
        #expect(decoded?.requestID == scan.requestID, sourceLocation: sourceLocation)
        // Compared by their deterministic encoding, which tells doubles
        // (NaNs among them) by their bits.
        #expect(decoded.map { canonical($0.save) } == canonical(scan.save), sourceLocation: sourceLocation)
        if case .save? = decoded?.request {} else { Issue.record("scanned a frame that is not a save", sourceLocation: sourceLocation) }
        return scan
    }

    /// `save`'s bytes with its map entries in key order.
    private static func canonical(_ save: Strata_V1_SaveRequest) -> [UInt8]? {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        return try? save.serializedBytes(options: options)
    }

    private static func value(_ kind: Strata_V1_Value.OneOf_Kind?) -> Strata_V1_Value {
        var value = Strata_V1_Value()
        value.kind = kind
        return value
    }

    /// Every kind of value but `objects`, with its edge values.
    private static let kinds: [Strata_V1_Value.OneOf_Kind?] = [
        nil,
        .integer(0), .integer(1), .integer(-1), .integer(.max), .integer(.min), .integer(-300),
        .double(0), .double(-0.0), .double(.infinity), .double(-1.5e300), .double(.leastNonzeroMagnitude),
        .decimal("-123.45"), .decimal(""), .string(""), .string("naïve 👩‍👩‍👧"), .string("nul\u{0}inside"),
        .boolean(false), .boolean(true), .date(-978_307_200.5), .date(0),
        .binary(Data()), .binary(Data((0..<300).map { UInt8($0 & 0xFF) })),
        .uuid(Data(repeating: 7, count: 16)), .uuid(Data([1, 2, 3])),
        .uri("https://example.com/é"), .object("strata://S/Book/p12"), .object("t1"),
    ]

    @Test("Saves of inserts read as SwiftProtobuf decodes them")
    func matchesDecoding() throws {
        for round in 0..<200 {
            let frame = Strata_V1_ClientFrame.with { frame in
                if round % 5 != 0 { frame.requestID = UInt64(round) * 7_919 + (round % 11 == 0 ? UInt64.max / 2 : 0) }
                frame.save = Strata_V1_SaveRequest.with { save in
                    save.inserts = (0..<(round % 4)).map { i in
                        Strata_V1_InsertedObject.with { insert in
                            if (round + i) % 6 != 0 { insert.temporaryID = "t\(i)" }
                            insert.entity = i % 2 == 0 ? "Book" : "Feedback"
                            if round % 7 == 3 { insert.configuration = "Reviews" }
                            for (k, kind) in Self.kinds.enumerated() where (k + round + i) % 3 == 0 {
                                insert.values[k % 9 == 0 ? "" : "p\(k)"] = Self.value(kind)
                            }
                        }
                    }
                    if round % 3 == 1 { save.author = "importer é" }
                    switch round % 8 {
                    case 1: save.mergePolicy = .overwrite
                    case 2: save.mergePolicy = .mergeByPropertyObjectTrump
                    case 3: save.mergePolicy = .UNRECOGNIZED(42)
                    default: break
                    }
                }
            }
            let scan = try #require(Self.checkedScan(try Self.bytes(frame)), "round \(round)")
            #expect(scan.save == frame.save)
            #expect(scan.requestID == frame.requestID)
        }
    }

    @Test("Doubles and dates keep their bits: negative zero, NaN payloads")
    func doublesKeepTheirBits() throws {
        let doubles = [-0.0, Double(nan: 0x1234, signaling: false), -Double.nan, Double.greatestFiniteMagnitude]
        let frame = Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.save = .with { save in
                save.inserts = [.with { insert in
                    insert.temporaryID = "t"
                    insert.entity = "B"
                    for (i, d) in doubles.enumerated() {
                        insert.values["d\(i)"] = Self.value(.double(d))
                        insert.values["w\(i)"] = Self.value(.date(d))
                    }
                }]
            }
        }
        let bytes = try Self.bytes(frame)
        let scan = try #require(SaveFrameScan(scanning: ByteBuffer(bytes: bytes)))
        let decoded = try Strata_V1_ClientFrame(serializedBytes: bytes)
        for (name, value) in decoded.save.inserts[0].values {
            let scanned = scan.save.inserts.first?.values[name]?.kind
            switch (value.kind, scanned) {
            case (.double(let a)?, .double(let b)?), (.date(let a)?, .date(let b)?):
                #expect(a.bitPattern == b.bitPattern, "\(name)")
            default:
                Issue.record("\(name): \(String(describing: value.kind)) scanned as \(String(describing: scanned))")
            }
        }
    }

    @Test("Map entries given out of the usual shape read as the decoder reads them")
    func unusualEntries() throws {
        // InsertedObject { entity "B", values: {key "a", value {integer 1}}, {key "a", value {string "x"}},
        // {value {boolean true}} (no key), {key "n"} (no value), {} (empty) }
        let insert: [UInt8] = [
            0x12, 0x01, 0x42,
            0x22, 0x07, 0x0A, 0x01, 0x61, 0x12, 0x02, 0x08, 0x02,
            0x22, 0x08, 0x0A, 0x01, 0x61, 0x12, 0x03, 0x22, 0x01, 0x78,
            0x22, 0x04, 0x12, 0x02, 0x28, 0x01,
            0x22, 0x03, 0x0A, 0x01, 0x6E,
            0x22, 0x00,
        ]
        // Entries first, then the fields of the insert, then a second
        // request ID (the last one counts) and the merge policy twice.
        let save: [UInt8] = [0x0A, UInt8(insert.count)] + insert + [0x20, 0x01, 0x20, 0x03, 0x2A, 0x01, 0x7A]
        let frame: [UInt8] = [0x08, 0x05, 0x72, UInt8(save.count)] + save + [0x08, 0x09]
        let scan = try #require(Self.checkedScan(frame))
        #expect(scan.requestID == 9)
        #expect(scan.save.mergePolicy == .overwrite)
        let values = try #require(scan.save.inserts.first?.values)
        #expect(values["a"]?.kind == .string("x"))
        #expect(values[""] == Strata_V1_Value())
        #expect(values["n"] == Strata_V1_Value())
    }

    @Test("Anything but a plain save of inserts is left to the decoder")
    func declinesTheRest() throws {
        let insert = Strata_V1_InsertedObject.with { $0.temporaryID = "t"; $0.entity = "Book"; $0.values["p"] = Self.value(.integer(3)) }
        let declined: [(String, Strata_V1_ClientFrame)] = [
            ("an update", .with { $0.requestID = 1; $0.save = .with { $0.inserts = [insert]; $0.updates = [.with { $0.id = "strata://S/Book/p1" }] } }),
            ("a delete", .with { $0.requestID = 1; $0.save = .with { $0.deletes = [.with { $0.id = "strata://S/Book/p1" }] } }),
            ("a to-many value", .with { $0.requestID = 1; $0.save = .with {
                $0.inserts = [.with { $0.temporaryID = "t"; $0.entity = "Book"; $0.values["list"] = Self.value(.objects(.with { $0.ids = ["t2"] })) }]
            } }),
            ("a fetch", .with { $0.requestID = 1; $0.fetch = .with { $0.entity = "Book" } }),
            ("no request", .with { $0.requestID = 1 }),
        ]
        for (why, frame) in declined {
            #expect(SaveFrameScan(scanning: ByteBuffer(bytes: try Self.bytes(frame))) == nil, "\(why)")
        }
        let plain = try Self.bytes(.with { $0.requestID = 1; $0.save = .with { $0.inserts = [insert] } })
        #expect(Self.checkedScan(plain) != nil)
        // Byte-level cases SwiftProtobuf would accept with other meanings
        // (or refuse): each is declined.
        let save = Array(plain.dropFirst(4))   // SaveRequest body after 08 01 72 len
        let insertBody = Array(save.dropFirst(2))
        let entryBody: [UInt8] = [0x0A, 0x01, 0x70, 0x12, 0x02, 0x08, 0x06]
        // Whether the decoder reads each: a frame it reads proves that the
        // scan declined it for the reason named, not for being malformed.
        let cases: [(String, [UInt8], decodes: Bool)] = [
            ("a save given twice", plain + plain.dropFirst(2), true),
            ("an unknown top-level field", plain + [0x98, 0x06, 0x01], true),
            ("an unknown field in the save", [0x08, 0x01, 0x72, UInt8(save.count + 2)] + save + [0x38, 0x01], true),
            ("an unknown field in an insert", [0x08, 0x01, 0x72, UInt8(insertBody.count + 4), 0x0A, UInt8(insertBody.count + 2)] + insertBody + [0x28, 0x01], true),
            ("two values in one entry", Self.frame(entry: entryBody + [0x12, 0x02, 0x08, 0x08]), true),
            ("two kinds in one value", Self.frame(entry: [0x0A, 0x01, 0x70, 0x12, 0x04, 0x08, 0x06, 0x28, 0x01]), true),
            ("an unknown field in a value", Self.frame(entry: [0x0A, 0x01, 0x70, 0x12, 0x02, 0x60, 0x01]), true),
            ("an unknown field in an entry", Self.frame(entry: entryBody + [0x18, 0x01]), true),
            ("a wire type that does not match", Self.frame(entry: [0x0A, 0x01, 0x70, 0x12, 0x02, 0x10, 0x01]), true),
            ("a merge policy past int32", [0x08, 0x01, 0x72, 0x06, 0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], true),
            ("text that is not UTF-8", Self.frame(entry: [0x0A, 0x01, 0xFF, 0x12, 0x02, 0x08, 0x06]), false),
            ("a truncated frame", Array(plain.dropLast()), false),
        ]
        for (why, bytes, decodes) in cases {
            #expect(SaveFrameScan(scanning: ByteBuffer(bytes: bytes)) == nil, "\(why)")
            #expect(((try? Strata_V1_ClientFrame(serializedBytes: bytes)) != nil) == decodes, "\(why)")
        }
    }

    /// A frame (request 1) saving one insert of "B" with one `values` entry
    /// of body `entry`.
    private static func frame(entry: [UInt8]) -> [UInt8] {
        let insert: [UInt8] = [0x12, 0x01, 0x42, 0x22, UInt8(entry.count)] + entry
        let save: [UInt8] = [0x0A, UInt8(insert.count)] + insert
        return [0x08, 0x01, 0x72, UInt8(save.count)] + save
    }

    @Test("Damaged frames are either declined or read as the decoder reads them")
    func damagedFrames() throws {
        let base = try Self.bytes(.with { frame in
            frame.requestID = 77
            frame.save = .with { save in
                save.author = "a"
                save.inserts = (0..<3).map { i in
                    .with { insert in
                        insert.temporaryID = "t\(i)"
                        insert.entity = "Book"
                        for (k, kind) in Self.kinds.enumerated() where k % 4 == i { insert.values["p\(k)"] = Self.value(kind) }
                    }
                }
            }
        })
        let variants = FrameDamage.variants(of: base)
        let scanned = variants.filter { Self.checkedScan($0) != nil }.count
        // Many damaged frames still read (a changed value or name).
        #expect(variants.count > 10_000 && scanned > 1000)
    }
}
