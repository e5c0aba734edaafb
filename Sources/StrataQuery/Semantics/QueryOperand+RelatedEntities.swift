extension QueryOperand {
    /// The entities whose objects the operand reads through relationships
    /// (the destination of every step, to-one or to-many).
    public var relatedEntities: Set<String> {
        switch self {
        case .constant, .list:
            return []
        case .attribute(let steps, _), .object(let steps):
            return Set(steps.map(\.destinationEntity))
        case .aggregate(_, let path, _), .subqueryCount(let path, _):
            return Set(path.toOneSteps.map(\.destinationEntity) + [path.toMany.destinationEntity])
        case .function(_, let arguments):
            return arguments.reduce(into: []) { $0.formUnion($1.relatedEntities) }
        }
    }
}
