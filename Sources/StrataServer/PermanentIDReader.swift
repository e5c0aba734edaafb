import StrataModel

/// Reads the common permanent object ID, `strata://<store>/<Entity>/p<key>`
/// naming one of this server's stores, from its text without making a
/// string for the store: the ID holds the store's own identifier string,
/// which also makes it compare equal to the row cache's keys at once (the
/// same storage) rather than byte by byte.
///
/// It answers only what ``ObjectID/init(uriRepresentation:)`` reads the
/// same way: ASCII text, a known store, an entity name without `/`, and a
/// key of at most 18 digits. Anything else (a sign, a longer key, another
/// store, a temporary ID, text that is not an ID) is nil here, and the
/// caller reads it the general way, which accepts or refuses it.
struct PermanentIDReader: Sendable {
    /// Each store's identifier with its UTF-8 bytes. Identifiers holding
    /// `/` are left out: the general reader never reads them as a store.
    private let stores: [(identifier: String, bytes: [UInt8])]

    /// A reader of IDs of the stores with these identifiers.
    init(storeIdentifiers: [String]) {
        stores = storeIdentifiers.filter { !$0.utf8.contains(UInt8(ascii: "/")) && !$0.isEmpty }.map { ($0, Array($0.utf8)) }
    }

    private static let prefix = Array("strata://".utf8)

    /// The ID `text` spells, when it is the common permanent ID of a known
    /// store; nil otherwise (not necessarily an invalid ID).
    func permanentID(_ text: String) -> ObjectID? {
        var text = text
        return text.withUTF8 { bytes in permanentID(UnsafeRawBufferPointer(bytes)) }
    }

    /// ``permanentID(_:)`` of an ID's UTF-8 bytes (any bytes: what is not
    /// the common permanent ID of a known store, ASCII, answers nil).
    func permanentID(_ bytes: UnsafeRawBufferPointer) -> ObjectID? {
        let slash = UInt8(ascii: "/")
        let prefix = Self.prefix
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
        var index = prefix.count
        // The store: one of ours, then a slash.
        var store: String?
        for candidate in stores {
            let end = index + candidate.bytes.count
            guard end < bytes.count, bytes[end] == slash,
                  UnsafeRawBufferPointer(rebasing: bytes[index..<end]).elementsEqual(candidate.bytes) else { continue }
            store = candidate.identifier
            index = end + 1
            break
        }
        guard let store else { return nil }
        // The entity: ASCII up to the next slash, not empty.
        let entityStart = index
        while index < bytes.count, bytes[index] != slash {
            guard bytes[index] < 0x80 else { return nil }
            index += 1
        }
        guard index > entityStart, index < bytes.count else { return nil }
        let entityEnd = index
        // "/p" and 1…18 digits to the end.
        index += 1
        guard index < bytes.count, bytes[index] == UInt8(ascii: "p") else { return nil }
        index += 1
        let digits = bytes.count - index
        guard (1...18).contains(digits) else { return nil }
        var key: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            key = key * 10 + Int64(digit)
            index += 1
        }
        let entity = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[entityStart..<entityEnd]), as: UTF8.self)
        return ObjectID(storeIdentifier: store, entityName: entity, key: .permanent(key))
    }
}
