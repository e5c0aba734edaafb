import NIOCore
import StrataContext
import StrataModel
import StrataWire

extension RequestProbe {
    /// How the event loop's reading of a frame as a save of inserts
    /// (``InsertSaveScan``) compares with the full path (SwiftProtobuf's
    /// decoding, then ``ServerCore/decode(_:)`` with the merge policy and
    /// author).
    package struct InsertScanCheck: Sendable {
        /// Whether the scan took the frame.
        package var taken: Bool
        /// How it read the frame otherwise than the full path (or took a
        /// save that path refuses); nil when it agrees.
        package var disagreement: String?
    }

    /// Reads `payload` both ways. The scan must take no save the full path
    /// refuses, and read the one both take alike: the same request ID,
    /// names, merge policy, author, and inserts (entity, store, values; a
    /// temporary ID, new on every reading, compared by its insert's place).
    package func checkInsertScan(payload: [UInt8]) -> InsertScanCheck {
        guard let scan = InsertSaveScan(scanning: ByteBuffer(bytes: payload), core: core, clientName: "probe", identity: nil) else {
            return InsertScanCheck(taken: false)
        }
        guard let frame = try? Strata_V1_ClientFrame(serializedBytes: payload), case .save(let message)? = frame.request else {
            return InsertScanCheck(taken: true, disagreement: "the scan took a frame that does not decode as a save")
        }
        guard var full = try? core.decode(message), let policy = try? ServerCore.mergePolicy(message.mergePolicy) else {
            return InsertScanCheck(taken: true, disagreement: "the scan took a save the full path refuses")
        }
        full.mergePolicy = policy
        full.author = ServerCore.author(given: message.author, clientName: "probe", identity: nil)
        if frame.requestID != scan.requestID {
            return InsertScanCheck(taken: true, disagreement: "request ID \(scan.requestID), decoded \(frame.requestID)")
        }
        if scan.names != message.inserts.map(\.temporaryID) {
            return InsertScanCheck(taken: true, disagreement: "names \(scan.names), decoded \(message.inserts.map(\.temporaryID))")
        }
        let (scanned, decoded) = (Self.comparable(scan.save), Self.comparable(full))
        guard scanned == decoded else {
            return InsertScanCheck(taken: true, disagreement: "read \(scanned), decoded \(decoded)")
        }
        return InsertScanCheck(taken: true)
    }

    /// A request as lines of text, its temporary IDs named by their
    /// insert's place.
    private static func comparable(_ save: SaveRequest) -> [String] {
        var places: [ObjectID: Int] = [:]
        for (place, insert) in save.inserts.enumerated() { places[insert.id] = place }
        func text(_ value: PropertyValue) -> String {
            if case .object(let id) = value, let place = places[id] { return "insert \(place)" }
            // Doubles by their bits (a NaN is not equal to itself).
            if case .double(let number) = value { return "double \(number.bitPattern)" }
            return "\(value)"
        }
        var lines = ["policy \(save.mergePolicy)", "author \(save.author ?? "-")", "updates \(save.updates.count)", "deletes \(save.deletes.count)"]
        for insert in save.inserts {
            let values = insert.values.keys.sorted().map { "\($0)=\(text(insert.values[$0] ?? .null))" }
            lines.append("\(insert.entity) \(insert.storeIdentifier ?? "-") temporary=\(insert.id.isTemporary) \(values.joined(separator: " "))")
        }
        return lines
    }
}
