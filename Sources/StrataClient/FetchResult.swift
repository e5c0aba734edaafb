import StrataWire

/// Everything a fetch returned, its batches gathered.
public struct FetchResult: Sendable {
    /// Objects, for an OBJECTS fetch.
    public var objects: [Strata_V1_ObjectState] = []
    /// IDs, for an OBJECT_IDS fetch.
    public var objectIDs: [String] = []
    /// The count (COUNT) or the number of results sent.
    public var count = 0

    /// An empty result.
    public init() {}
}
