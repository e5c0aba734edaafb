import Foundation
import NIOCore
import StrataAuth
import StrataContext
import StrataModel
import StrataWire

/// A `ClientFrame` carrying a save of inserts only, read from its bytes
/// straight into the ``SaveRequest`` the coordinator takes: the save most
/// clients send, without the protobuf messages in between
/// (`Strata_V1_SaveRequest`, a `Strata_V1_Value` dictionary per insert, a
/// `Data` per UUID) and without decoding each value a second time.
///
/// For every frame it answers, ``save`` is what ``ServerCore/decode(_:)``
/// makes of the message SwiftProtobuf decodes from the frame (with the
/// merge policy and author ``ServerCore`` gives it), and ``names`` are the
/// inserts' temporary IDs as sent. It answers nil, leaving the frame to
/// that path, wherever the scans of ``SaveFrameScan`` and
/// ``ProtobufReader/scannedValue()`` decline, and wherever that path would
/// refuse the save or must look further: no inserts, an insert without a
/// temporary ID or of an unknown entity, a temporary ID used twice, an
/// unknown configuration or merge policy, a value that does not decode, an
/// object ID that does not parse, and any save on a server with a
/// read-only store. So a refusal always comes from one place, with one
/// wording.
struct InsertSaveScan {
    /// `request_id`.
    let requestID: UInt64
    /// The save, its merge policy and author set.
    let save: SaveRequest
    /// Each insert's temporary ID as the client named it, in order.
    let names: [String]

    private static let varint = ProtobufReader.varintType
    private static let delimited = ProtobufReader.delimitedType

    /// One insert as read, before its object values are resolved.
    private struct Read {
        var name = ""
        var entity = ""
        var configuration = ""
        var values: [String: PropertyValue] = [:]
        /// Values naming an object, by property: resolved once every
        /// insert's ID is known (nil when there are none, the common case).
        var objects: [(property: String, id: String)]?
    }

    /// The save in `payload`, read for `core`'s model and stores, made by
    /// a client named `clientName` (authenticated as `identity`); nil when
    /// it is not a plain save of inserts this scan takes (see the type).
    init?(scanning payload: ByteBuffer, core: ServerCore, clientName: String, identity: Identity?) {
        // A save into a read-only store is refused before anything is
        // decoded (ServerCore.checkWritable): left to that path.
        guard core.coordinator.readOnlyStores.isEmpty else { return nil }
        // The inserts, put in the request at the end (a request built here
        // and captured by the reading closure would be copied out of it).
        var inserts: [SaveRequest.Insert] = []
        var names: [String] = []
        // Temporary IDs by name, once there are several inserts.
        var byName: [String: ObjectID] = [:]
        // Object values to resolve: (insert, property, ID text).
        var objects: [(insert: Int, property: String, id: String)] = []
        var wirePolicy = Strata_V1_MergePolicy.error
        var author = ""
        let requestID = ProtobufReader.clientFrameRequestID(payload, requestField: SaveHandler.saveField) { (reader: inout ProtobufReader) -> Bool? in
            while !reader.isAtEnd {
                guard let key = reader.varint() else { return nil }
                switch key {
                case 1 << 3 | Self.delimited:
                    // Read in place: an optional result is copied out.
                    var read = Read()
                    guard var body = reader.delimited(), Self.readInsert(&body, into: &read),
                          !read.name.isEmpty, core.model.containsEntity(named: read.entity) else { return nil }
                    // Nil without a configuration; an unknown one is refused.
                    let storeIdentifier: String?
                    do {
                        storeIdentifier = try core.storeIdentifier(configuration: read.configuration, entity: read.entity)
                    } catch {
                        return nil
                    }
                    let id = ObjectID.temporary(entityName: read.entity)
                    if names.count == 1 { byName[names[0]] = inserts[0].id }
                    if !names.isEmpty {
                        guard byName.updateValue(id, forKey: read.name) == nil else { return nil }
                    }
                    for (property, text) in read.objects ?? [] { objects.append((names.count, property, text)) }
                    names.append(read.name)
                    inserts.append(SaveRequest.Insert(id: id, storeIdentifier: storeIdentifier, values: read.values))
                case 4 << 3 | Self.varint:
                    // An enum is an int32 on the wire; anything wider is left
                    // to the decoder.
                    guard let value = reader.varint(), value <= UInt64(Int32.max),
                          let policy = Strata_V1_MergePolicy(rawValue: Int(value)) else { return nil }
                    wirePolicy = policy
                case 5 << 3 | Self.delimited:
                    guard let text = reader.text() else { return nil }
                    author = text
                default:
                    // Updates, deletes, unknown fields, wrong wire types.
                    return nil
                }
            }
            return true
        }
        guard let requestID, !names.isEmpty,
              let mergePolicy = try? ServerCore.mergePolicy(wirePolicy) else { return nil }
        // As ServerCore.decode resolves them: the only insert by its name,
        // any insert by its name, else a saved object's ID.
        for (insert, property, text) in objects {
            let id: ObjectID
            if names.count == 1, text == names[0] {
                id = inserts[0].id
            } else if let named = byName[text] {
                id = named
            } else if let parsed = try? PropertyValue.parseObjectID(text) {
                id = parsed
            } else {
                return nil
            }
            inserts[insert].values[property] = .object(id)
        }
        self.requestID = requestID
        self.save = SaveRequest(inserts: inserts, mergePolicy: mergePolicy, author: ServerCore.author(given: author, clientName: clientName, identity: identity))
        self.names = names
    }

    /// Reads an `InsertedObject` body into `read` (fresh); false when the
    /// scan declines it.
    private static func readInsert(_ reader: inout ProtobufReader, into read: inout Read) -> Bool {
        let fields = reader.scannedInsertedObject(reserve: { read.values.reserveCapacity($0) }) { name, scanned in
            // A key given again replaces the value, as the decoder does.
            if read.objects != nil { read.objects?.removeAll { $0.property == name } }
            switch scanned ?? .value(.null) {
            case .value(let value):
                read.values[name] = value
            case .object(let text):
                read.values[name] = nil
                read.objects = (read.objects ?? []) + [(name, text)]
            }
        }
        guard let fields else { return false }
        read.name = fields.temporaryID
        read.entity = fields.entity
        read.configuration = fields.configuration
        return true
    }
}
