import Foundation

/// The identity of a managed object: which store, which entity, which row.
///
/// Saved objects have permanent IDs printed as
/// `strata://<store-uuid>/<Entity>/p<key>`; inserted objects carry a
/// temporary ID until their first save.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The key part of an ID.
    public enum Key: Sendable, Hashable {
        /// A saved row's primary key, unique within its entity hierarchy and store.
        case permanent(Int64)
        /// An unsaved object's temporary key.
        case temporary(UUID)
    }

    /// The identifier of the store holding the object (empty for temporary IDs).
    public var storeIdentifier: String
    /// The object's entity name.
    public var entityName: String
    /// Permanent or temporary key.
    public var key: Key

    /// Creates an ID.
    public init(storeIdentifier: String, entityName: String, key: Key) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.key = key
    }

    /// A new temporary ID for an inserted object: unique in the process
    /// (a random per-process prefix and a counter), without the system
    /// random source that `UUID()` reads on every call.
    public static func temporary(entityName: String) -> ObjectID {
        ObjectID(storeIdentifier: "", entityName: entityName, key: .temporary(TemporaryKeySource.next()))
    }

    /// Whether the ID is temporary.
    public var isTemporary: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The primary key of a permanent ID.
    public var primaryKey: Int64? {
        if case .permanent(let pk) = key { return pk }
        return nil
    }

    /// `strata://<store>/<Entity>/p<key>` for permanent IDs,
    /// `strata-temp://<Entity>/t<uuid>` for temporary ones.
    public var uriRepresentation: String {
        switch key {
        case .permanent(let pk): "strata://\(storeIdentifier)/\(entityName)/p\(pk)"
        case .temporary(let uuid): "strata-temp://\(entityName)/t\(uuid.uuidString)"
        }
    }

    /// Parses the text form produced by ``uriRepresentation``. One scan of
    /// the UTF-8 bytes (IDs are parsed on every request a server answers).
    public init?(uriRepresentation text: String) {
        var text = text
        let parsed: ObjectID?? = text.withUTF8 { bytes -> ObjectID?? in
            let slash = UInt8(ascii: "/")
            func string(_ range: Range<Int>) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
            if Self.hasPrefix(bytes, "strata://") {
                // strata://<store>/<Entity>/p<key>
                let start = 9
                guard let first = bytes[start...].firstIndex(of: slash),
                      let second = bytes[(first + 1)...].firstIndex(of: slash), second > first + 1,
                      bytes[(second + 1)...].firstIndex(of: slash) == nil,
                      second + 2 < bytes.count, bytes[second + 1] == UInt8(ascii: "p"),
                      let key = Int64(string((second + 2)..<bytes.count)) else { return .some(nil) }
                return ObjectID(storeIdentifier: string(start..<first), entityName: string((first + 1)..<second), key: .permanent(key))
            }
            return nil
        }
        if let parsed {
            guard let id = parsed else { return nil }
            self = id
            return
        }
        if text.hasPrefix("strata-temp://") {
            let parts = text.dropFirst("strata-temp://".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].first == "t",
                  let uuid = UUID(uuidString: String(parts[1].dropFirst())) else { return nil }
            self.init(storeIdentifier: "", entityName: String(parts[0]), key: .temporary(uuid))
        } else {
            return nil
        }
    }

    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        for i in 0..<p.count where bytes[i] != p[i] { return false }
        return true
    }

    /// Same as ``uriRepresentation``.
    public var description: String { uriRepresentation }

    /// Hashes as little as tells IDs apart in practice, since registries
    /// and change sets hash every ID several times: a temporary key alone
    /// (unique in the process that made it), as two words rather than
    /// UUID's byte-wise hashing; a permanent key with the entity name
    /// (keys are unique per entity hierarchy). The 36-character store
    /// identifier is never hashed. Equality still compares every field.
    public func hash(into hasher: inout Hasher) {
        switch key {
        case .temporary(let uuid):
            let words = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            hasher.combine(words.0)
            hasher.combine(words.1)
        case .permanent(let pk):
            hasher.combine(pk)
            hasher.combine(entityName)
        }
    }
}
