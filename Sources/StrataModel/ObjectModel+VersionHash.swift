import Crypto
extension ObjectModel {
    /// The entity's version hash: 32 bytes of SHA-256 over a canonical
    /// encoding of the entity's *persisted shape*. Stores record these hashes
    /// and refuse to open with a model whose hashes differ (error 134100).
    ///
    /// Exactly what is hashed (format tag `strata.entity.v1`, strings as
    /// length-prefixed UTF-8, integers as 64-bit big-endian, flags as one byte):
    /// - the entity's name, its parent's name and the parent's own version
    ///   hash (so a change above an entity changes it too, as in Core Data),
    ///   the abstract flag and the entity's `versionHashModifier`;
    /// - for each **persisted** (non-transient) attribute the entity declares:
    ///   name, type (as Xcode spells it), optional flag, `versionHashModifier`;
    /// - for each **persisted** relationship the entity declares: name,
    ///   destination entity, inverse name, to-many and ordered flags,
    ///   optional flag, minCount, maxCount, `versionHashModifier`.
    ///
    /// Attribute and relationship records are each sorted by their encoded
    /// bytes (the length-prefixed name comes first), so declaration order
    /// does not matter. Not hashed: transient properties,
    /// fetched properties, defaults, bounds, regular expressions, derivation
    /// expressions, value transformers and class names, delete rules,
    /// indexes and uniqueness constraints, renaming identifiers, user info
    /// and configurations. (Core Data hashes the same facts, plus its
    /// read-only flag, which Strata does not have.)
    ///
    /// Returns an empty array when the model has no such entity.
    public func versionHash(ofEntity entityName: String) -> [UInt8] {
        guard entity(named: entityName) != nil else { return [] }
        return versionHash(ofEntity: entityName, visiting: [])
    }

    /// The version hash of every entity, keyed by name (see
    /// ``versionHash(ofEntity:)``).
    public var entityVersionHashes: [String: [UInt8]] {
        var hashes: [String: [UInt8]] = [:]
        for entity in entities where hashes[entity.name] == nil {
            hashes[entity.name] = versionHash(ofEntity: entity.name)
        }
        return hashes
    }

    /// One hash for the whole model: SHA-256 over `strata.model.v1` and every
    /// entity's name and version hash, sorted by name. Two models with the
    /// same persisted shape have the same hash (the wire protocol's hello
    /// carries it so a client can tell whether its model matches).
    public var modelVersionHash: [UInt8] {
        var encoder = CanonicalEncoder()
        encoder.write("strata.model.v1")
        for (name, hash) in entityVersionHashes.sorted(by: { $0.key < $1.key }) {
            encoder.write(name)
            encoder.write(bytes: hash)
        }
        return Array(SHA256.hash(data: encoder.bytes))
    }

    private func versionHash(ofEntity entityName: String, visiting: Set<String>) -> [UInt8] {
        guard let entity = entity(named: entityName) else { return [] }
        var encoder = CanonicalEncoder()
        encoder.write("strata.entity.v1")
        encoder.write(entity.name)
        encoder.write(entity.parentName)
        if let parent = entity.parentName, !visiting.contains(parent), parent != entity.name {
            encoder.write(bytes: versionHash(ofEntity: parent, visiting: visiting.union([entity.name])))
        } else {
            encoder.write(bytes: [])
        }
        encoder.write(entity.isAbstract)
        encoder.write(entity.versionHashModifier)

        let attributes = entity.attributes.filter(\.isPersisted).map { attribute -> [UInt8] in
            var record = CanonicalEncoder()
            record.write(attribute.name)
            record.write("attribute")
            record.write(attribute.type.xcodeName)
            record.write(attribute.isOptional)
            record.write(attribute.versionHashModifier)
            return record.bytes
        }
        let relationships = entity.relationships.filter { !$0.isTransient }.map { relationship -> [UInt8] in
            var record = CanonicalEncoder()
            record.write(relationship.name)
            record.write("relationship")
            record.write(relationship.destinationEntityName)
            record.write(relationship.inverseName)
            record.write(relationship.isToMany)
            record.write(relationship.isOrdered)
            record.write(relationship.isOptional)
            record.write(relationship.minCount)
            record.write(relationship.maxCount)
            record.write(relationship.versionHashModifier)
            return record.bytes
        }
        for group in [attributes, relationships] {
            let sorted = group.sorted { $0.lexicographicallyPrecedes($1) }
            encoder.writeLength(sorted.count)
            for record in sorted { encoder.write(bytes: record) }
        }
        return Array(SHA256.hash(data: encoder.bytes))
    }
}
