import StrataModel

/// A predicate checked against a model: every key path resolved to model
/// properties, every literal converted to the type it is compared with,
/// every variable substituted. This is what ``PredicateEvaluator`` runs in
/// memory and ``SQLQueryCompiler`` turns into SQL; both follow the
/// semantics written here, and a shared test suite holds them to it.
///
/// Semantics:
/// - `==` is true when both sides are nil, or both are non-nil and equal in
///   the comparison's ``ComparisonDomain``; `!=` is its negation (so
///   `nil != 5` is true, as in NSPredicate).
/// - `<`, `<=`, `>`, `>=`, `BETWEEN` and the string operators are false
///   when either side is nil.
/// - `IN` is true when the left side `==` some element of the list.
/// - `NOT`, `AND`, `OR` are two-valued: a comparison is true or false, never
///   unknown.
/// - ``quantified(_:_:_:)``: `ANY` is true when some destination satisfies
///   the inner predicate, `ALL` when every one does (true when there are
///   none), `NONE` when none does.
/// - Strings compare by Unicode scalar values (UTF-8 byte order, which is
///   SQLite's `BINARY` collation); `[c]`/`[d]` compare the
///   ``StringFolding`` of both sides.
public indirect enum QueryPredicate: Sendable, Hashable {
    /// Always true or always false.
    case constant(Bool)
    /// Negation.
    case not(QueryPredicate)
    /// Conjunction (true when empty).
    case and([QueryPredicate])
    /// Disjunction (false when empty).
    case or([QueryPredicate])
    /// A comparison of two operands.
    case compare(QueryComparison)
    /// `ANY`/`ALL`/`NONE` over the destinations of a to-many path; the inner
    /// predicate's operands are relative to each destination object.
    case quantified(Quantifier, CollectionPath, QueryPredicate)
}

/// `lhs op rhs` in one comparison domain.
public struct QueryComparison: Sendable, Hashable {
    /// The left operand.
    public var lhs: QueryOperand
    /// The operator; `.in` and `.between` take a ``QueryOperand/list(_:)`` on the right.
    public var op: ComparisonOperator
    /// The right operand.
    public var rhs: QueryOperand
    /// What kind of values are compared, and how.
    public var domain: ComparisonDomain
    /// `[c]`/`[d]` (only meaningful for the string domain).
    public var options: StringComparisonOptions
    /// The use of a variable the left side's constant was bound from, when
    /// that side was written as exactly `$NAME` (for the SQL compiler,
    /// which binds such a constant as that use's ``QueryParameter``).
    public var lhsVariable: VariableUse?
    /// The use of a variable the right side's constant was bound from, likewise.
    public var rhsVariable: VariableUse?

    /// Creates a comparison.
    public init(lhs: QueryOperand, op: ComparisonOperator, rhs: QueryOperand, domain: ComparisonDomain, options: StringComparisonOptions = [], lhsVariable: VariableUse? = nil, rhsVariable: VariableUse? = nil) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.domain = domain
        self.options = options
        self.lhsVariable = lhsVariable
        self.rhsVariable = rhsVariable
    }
}

/// The kind of values a comparison compares. Both operands are converted to
/// the domain before comparing: integers to Double in the `.double` domain,
/// integers and Doubles (via their shortest decimal text) to Decimal in the
/// `.decimal` domain. Booleans are integers 0 and 1.
public enum ComparisonDomain: Sendable, Hashable {
    /// Int64 comparison.
    case integer
    /// Double comparison.
    case double
    /// Exact decimal comparison.
    case decimal
    /// String comparison (scalar order, optionally folded).
    case string
    /// Date comparison (seconds since 2001-01-01, as Double).
    case date
    /// Byte-wise comparison of Data.
    case binary
    /// UUID comparison by its 16 bytes.
    case uuid
    /// URI comparison by its text.
    case uri
    /// Object identity comparison (`==`, `!=`, `IN` only).
    case object
}

/// One step through a relationship.
public struct RelationshipStep: Sendable, Hashable {
    /// The entity the step starts from (where the relationship is declared or inherited).
    public var sourceEntity: String
    /// The relationship followed.
    public var relationship: RelationshipDescription

    /// Creates a step.
    public init(sourceEntity: String, relationship: RelationshipDescription) {
        self.sourceEntity = sourceEntity
        self.relationship = relationship
    }

    /// The entity the step arrives at.
    public var destinationEntity: String { relationship.destinationEntityName }
}

/// A path of to-one steps ending in a to-many relationship.
public struct CollectionPath: Sendable, Hashable {
    /// To-one steps from the current object (possibly none).
    public var toOneSteps: [RelationshipStep]
    /// The to-many relationship at the end.
    public var toMany: RelationshipStep

    /// Creates a path.
    public init(toOneSteps: [RelationshipStep] = [], toMany: RelationshipStep) {
        self.toOneSteps = toOneSteps
        self.toMany = toMany
    }
}

/// Collection operators over a to-many path.
public enum AggregateFunction: String, Sendable, Hashable {
    /// Number of destinations (Integer 64).
    case count = "@count"
    /// Sum; 0 of the attribute's numeric kind when there are no destinations.
    case sum = "@sum"
    /// Average: Double for integer and floating-point attributes, Decimal for
    /// Decimal ones; nil when there are no destinations (or all are nil).
    case avg = "@avg"
    /// Smallest non-nil value; nil when none.
    case min = "@min"
    /// Largest non-nil value; nil when none.
    case max = "@max"
}

/// Functions of derivation expressions.
public enum QueryFunction: String, Sendable, Hashable {
    /// `canonical:(x)`: case- and diacritic-folded string (see ``StringFolding``).
    case canonical
    /// `uppercase:(x)`.
    case uppercase
    /// `lowercase:(x)`.
    case lowercase
    /// `now()`: the current date.
    case now
}

/// One side of a ``QueryComparison``.
public indirect enum QueryOperand: Sendable, Hashable {
    /// A constant, already converted to the comparison's domain.
    case constant(PropertyValue)
    /// A list of constants (right side of `IN` and `BETWEEN`).
    case list([PropertyValue])
    /// The value of an attribute reached through to-one steps from the
    /// current object; nil when any step is nil.
    case attribute([RelationshipStep], AttributeDescription)
    /// The object reached through to-one steps (the current object itself
    /// when there are none), as `.object(ObjectID)`, or nil.
    case object([RelationshipStep])
    /// A collection operator over a to-many path: `@count` (no attribute) or
    /// `@sum`/`@avg`/`@min`/`@max` of an attribute of the destinations.
    case aggregate(AggregateFunction, CollectionPath, AttributeDescription?)
    /// `SUBQUERY(path, $x, predicate).@count`: how many destinations satisfy
    /// the predicate (relative to each destination).
    case subqueryCount(CollectionPath, QueryPredicate)
    /// A function of other operands (derivation expressions only).
    case function(QueryFunction, [QueryOperand])
}

/// A sort key resolved against the model.
public struct QuerySortKey: Sendable, Hashable {
    /// To-one steps to the entity holding the attribute.
    public var steps: [RelationshipStep]
    /// The attribute sorted by.
    public var attribute: AttributeDescription
    /// Ascending (nil first) or descending (nil last).
    public var ascending: Bool
    /// Compare the ``StringFolding`` (case-folded) form of strings.
    public var caseInsensitive: Bool

    /// Creates a sort key.
    public init(steps: [RelationshipStep] = [], attribute: AttributeDescription, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.steps = steps
        self.attribute = attribute
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }
}

/// A fetch resolved against the model: which entity, which objects, in what
/// order, which window. Ties after the sort keys are broken by primary key,
/// ascending, in both the evaluator and SQL, so results are deterministic.
public struct ResolvedFetch: Sendable, Hashable {
    /// The entity fetched.
    public var entityName: String
    /// Whether instances of subentities are included.
    public var includesSubentities: Bool
    /// The filter.
    public var predicate: QueryPredicate
    /// The sort keys, most significant first.
    public var sortKeys: [QuerySortKey]
    /// At most this many results (nil = all).
    public var limit: Int?
    /// Skip this many results first.
    public var offset: Int
    /// The request this fetch was resolved from and the variables bound,
    /// for stores that forward fetches rather than run them (a remote
    /// store sends the predicate's text and variables to its server).
    public var source: FetchRequest?
    /// The variables bound when resolving ``source``.
    public var variables: [String: VariableValue] = [:]

    /// Creates a resolved fetch.
    public init(entityName: String, includesSubentities: Bool = true, predicate: QueryPredicate = .constant(true), sortKeys: [QuerySortKey] = [], limit: Int? = nil, offset: Int = 0) {
        self.entityName = entityName
        self.includesSubentities = includesSubentities
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.limit = limit
        self.offset = offset
    }
}
