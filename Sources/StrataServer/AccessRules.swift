import Foundation
import StrataAuth
import StrataModel
import StrataQuery

/// Per-entity access rules (`strata-server --rules FILE`): for each entity,
/// who may `read`, `create`, `update` and `delete` its objects. A rule is
/// `null` (the `admin` role only), `"TRUEPREDICATE"` (anyone
/// authenticated), or a predicate over the object that may use
/// `$AUTH.subject`, `$AUTH.roles` and `$AUTH.claims.NAME`:
///
/// ```json
/// {
///   "Book": {
///     "read": "TRUEPREDICATE",
///     "create": "'editor' IN $AUTH.roles",
///     "update": "author == $AUTH.subject OR 'editor' IN $AUTH.roles",
///     "delete": null
///   }
/// }
/// ```
///
/// An operation left out is `null`; an entity left out takes its parent
/// entity's rules, or else is `admin` only. A sub-entity's `read` rule
/// must be its parent's (a fetch of the parent returns sub-entity
/// objects too). Every rule is parsed and type-checked against the model
/// when loaded; every problem is reported at once. The `admin` role
/// bypasses all rules.
public struct AccessRules: Sendable {
    /// What a rule governs.
    public enum Operation: String, Sendable, CaseIterable {
        /// Fetch, count, refresh, subscriptions, fetched properties.
        case read
        /// Inserting objects (checked on the object as inserted).
        case create
        /// Changing objects (checked on the object before the change).
        case update
        /// Deleting objects (checked on the object before the delete).
        case delete
    }

    /// One rule.
    public struct Rule: Sendable, Hashable {
        /// The rule as written; nil for `null` (the `admin` role only).
        public let text: String?
        /// The predicate, `$AUTH` references turned into variables
        /// (``AccessRules/subjectVariable`` and its siblings).
        let predicate: StrataQuery.Predicate?
        /// The claims it reads: a caller lacking one is admitted by nothing.
        var claims: Set<String> = []

        /// Whether only `admin` may.
        public var isAdminOnly: Bool { predicate == nil }
        /// Whether anyone authenticated may.
        var admitsEveryone: Bool { predicate == .truePredicate }
        /// The rule as quoted in denials.
        var quoted: String { text.map { "\"\($0)\"" } ?? "null (admin only)" }

        static let adminOnly = Rule(text: nil, predicate: nil, claims: [])
    }

    /// The prefix of every variable `$AUTH` values become.
    static let variablePrefix = "AUTH."
    /// The variable `$AUTH.subject` becomes (a name no predicate text can spell).
    static let subjectVariable = variablePrefix + "subject"
    /// The variable `$AUTH.roles` becomes.
    static let rolesVariable = variablePrefix + "roles"
    /// The prefix of the variable `$AUTH.claims.NAME` becomes.
    static let claimPrefix = variablePrefix + "claims."

    /// The effective rules of every entity of the model.
    private let rules: [String: [Operation: Rule]]
    /// The claims some rule reads (each bound, nil when the caller lacks it).
    let claimNames: Set<String>

    /// The largest rules file read.
    public static let maximumBytes = 4 * 1024 * 1024

    /// The rule for `operation` on `entity` (an entity the model does not
    /// have: admin only).
    public func rule(_ operation: Operation, for entity: String) -> Rule {
        rules[entity]?[operation] ?? .adminOnly
    }

    /// Reads and checks the rules file at `path` against `model`.
    public init(contentsOf path: String, model: ObjectModel) throws(ConfigurationFileError) {
        try self.init(json: ConfigurationFile.read(path, maximumBytes: Self.maximumBytes), file: path, model: model)
    }

    /// Parses and checks a rules file's bytes; `file` names it in errors.
    public init(json data: Data, file: String, model: ObjectModel) throws(ConfigurationFileError) {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationFileError(file: file, "not valid JSON: \(error.localizedDescription)")
        }
        guard let entities = document as? [String: Any] else {
            throw ConfigurationFileError(file: file, "must be a JSON object of entity names")
        }
        var problems: [String] = []
        var written: [String: [Operation: Rule]] = [:]
        var claims: Set<String> = []
        let resolver = PredicateResolver(model: model)
        for (entity, value) in entities.sorted(by: { $0.key < $1.key }) {
            guard model.entity(named: entity) != nil else {
                problems.append("\(entity): the model has no such entity")
                continue
            }
            guard let operations = value as? [String: Any] else {
                problems.append("\(entity): must be an object of operations (read, create, update, delete)")
                continue
            }
            var entityRules: [Operation: Rule] = [:]
            for (name, ruleValue) in operations.sorted(by: { $0.key < $1.key }) {
                guard let operation = Operation(rawValue: name) else {
                    problems.append("\(entity).\(name): not an operation (read, create, update, delete)")
                    continue
                }
                if ruleValue is NSNull {
                    entityRules[operation] = .adminOnly
                    continue
                }
                guard let text = ruleValue as? String else {
                    problems.append("\(entity).\(name): a rule is null or a predicate string")
                    continue
                }
                do {
                    let (predicate, used) = try Self.compile(text, entity: entity, resolver: resolver)
                    claims.formUnion(used)
                    entityRules[operation] = Rule(text: text, predicate: predicate, claims: used)
                } catch {
                    problems.append("\(entity).\(name): \(error)")
                }
            }
            written[entity] = entityRules
        }
        // Effective rules: written ones, else the nearest ancestor's entry.
        var effective: [String: [Operation: Rule]] = [:]
        for entity in model.entities {
            var source: String? = entity.name
            while let name = source, written[name] == nil { source = model.entity(named: name)?.parentName }
            let entry = source.flatMap { written[$0] } ?? [:]
            effective[entity.name] = Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, entry[$0] ?? .adminOnly) })
        }
        // A derived attribute is computed by the saving context, which reads
        // whatever its expression names: through a relationship to objects
        // not everyone may read, it would copy hidden values into the row.
        for entity in model.entities {
            for attribute in entity.attributes where attribute.derivationExpression?.isEmpty == false {
                guard let operand = try? resolver.resolveDerivation(of: attribute, in: entity.name) else { continue }
                for related in operand.relatedEntities.sorted() where effective[related]?[.read]?.admitsEveryone != true {
                    problems.append("\(entity.name).\(attribute.name): a derived attribute that reads \(related) objects, whose read rule does not admit everyone, would copy what they hold into \(entity.name) rows; make \(related).read TRUEPREDICATE or derive it otherwise")
                }
            }
        }
        for entity in model.entities {
            guard let parent = entity.parentName,
                  effective[entity.name]?[.read] != effective[parent]?[.read] else { continue }
            problems.append("\(entity.name).read: must be the same as \(parent).read, whose fetches include \(entity.name) objects")
        }
        guard problems.isEmpty else {
            throw ConfigurationFileError(file: file, problems.joined(separator: "; "))
        }
        rules = effective
        claimNames = claims
    }

    /// Parses a rule, turns its `$AUTH` references into variables and
    /// type-checks it on `entity`; returns the predicate and the claims it
    /// reads.
    static func compile(_ text: String, entity: String, resolver: PredicateResolver) throws -> (StrataQuery.Predicate, Set<String>) {
        let parsed = try PredicateParser.parseDetailed(text)
        var claims: Set<String> = []
        let predicate = try rewrite(parsed, claims: &claims)
        var variables: [String: VariableValue] = [
            subjectVariable: .value(.string("subject")),
            rolesVariable: .list([.string("role")]),
        ]
        for claim in claims { variables[claimPrefix + claim] = .value(.string("claim")) }
        _ = try resolver.resolve(predicate, entity: entity, variables: variables, source: text)
        return (predicate, claims)
    }

    /// The identity's values for the variables rules use.
    func variables(for identity: Identity) -> [String: VariableValue] {
        var variables: [String: VariableValue] = [
            Self.subjectVariable: .value(.string(identity.subject)),
            Self.rolesVariable: .list(identity.roles.sorted().map { .string($0) }),
        ]
        for claim in claimNames {
            variables[Self.claimPrefix + claim] = .value(identity.claims[claim].map { .string($0) } ?? .null)
        }
        return variables
    }

    // MARK: - $AUTH

    private static func rewrite(_ predicate: StrataQuery.Predicate, claims: inout Set<String>) throws -> StrataQuery.Predicate {
        switch predicate {
        case .truePredicate, .falsePredicate:
            return predicate
        case .not(let inner):
            return .not(try rewrite(inner, claims: &claims))
        case .and(let terms):
            return .and(try terms.map { try rewrite($0, claims: &claims) })
        case .or(let terms):
            return .or(try terms.map { try rewrite($0, claims: &claims) })
        case .comparison(var comparison):
            comparison.lhs = try rewrite(comparison.lhs, claims: &claims)
            comparison.rhs = try rewrite(comparison.rhs, claims: &claims)
            return .comparison(comparison)
        }
    }

    private static func rewrite(_ expression: StrataQuery.Expression, claims: inout Set<String>) throws -> StrataQuery.Expression {
        switch expression {
        case .literal:
            return expression
        case .array(let elements, let range):
            return .array(try elements.map { try rewrite($0, claims: &claims) }, range)
        case .cast(let inner, let type, let range):
            return .cast(try rewrite(inner, claims: &claims), type, range)
        case .function(let name, let arguments, let range):
            return .function(name, try arguments.map { try rewrite($0, claims: &claims) }, range)
        case .keyPath(.subquery(var subquery), let path, let range):
            subquery.collection = try rewrite(subquery.collection, claims: &claims)
            subquery.predicate = try rewrite(subquery.predicate, claims: &claims)
            return .keyPath(.subquery(subquery), path, range)
        case .keyPath(.variable(let name), let path, let range):
            guard name == "AUTH" else {
                // A SUBQUERY's own variable is bound by it; any other is not
                // something a rule can be given.
                return expression
            }
            switch path.first {
            case "subject" where path.count == 1:
                return .keyPath(.variable(subjectVariable), [], range)
            case "roles" where path.count == 1:
                return .keyPath(.variable(rolesVariable), [], range)
            case "claims" where path.count == 2:
                claims.insert(path[1])
                return .keyPath(.variable(claimPrefix + path[1]), [], range)
            default:
                throw StrataError(.predicateType, "$AUTH.\(path.joined(separator: ".")) (characters \(range.start)–\(range.end)): a rule may use $AUTH.subject, $AUTH.roles and $AUTH.claims.NAME")
            }
        case .keyPath(.evaluatedObject, _, _):
            return expression
        }
    }
}
