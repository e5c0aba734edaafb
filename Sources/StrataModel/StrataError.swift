import Foundation

/// The one error type every Strata layer throws.
///
/// An error is a value: a stable numeric ``Code`` (Core Data's number where
/// Core Data has one), a message that names the entity, property, file or
/// byte offset at fault, and optional structured ``details``.
public struct StrataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable numeric error code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The number, stable across releases.
        public var rawValue: Int
        /// Wraps a raw code number.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The number as text.
        public var description: String { String(rawValue) }

        // Core Data's validation codes (CoreDataErrors.h).
        /// Generic validation failure.
        public static let validation = Code(rawValue: 1550)
        /// Several validation errors at once; `details` lists each.
        public static let multipleValidationErrors = Code(rawValue: 1560)
        /// A mandatory property is nil.
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        /// A to-many relationship has fewer objects than its minimum count.
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        /// A to-many relationship has more objects than its maximum count.
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// A delete was refused by a Deny delete rule.
        public static let validationRelationshipDeniedDelete = Code(rawValue: 1600)
        /// A number is larger than the attribute's maximum.
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        /// A number is smaller than the attribute's minimum.
        public static let validationNumberTooSmall = Code(rawValue: 1620)
        /// A date is later than the attribute's maximum.
        public static let validationDateTooLate = Code(rawValue: 1630)
        /// A date is earlier than the attribute's minimum.
        public static let validationDateTooSoon = Code(rawValue: 1640)
        /// A date is invalid.
        public static let validationInvalidDate = Code(rawValue: 1650)
        /// A string is longer than the attribute's maximum length.
        public static let validationStringTooLong = Code(rawValue: 1660)
        /// A string is shorter than the attribute's minimum length.
        public static let validationStringTooShort = Code(rawValue: 1670)
        /// A string does not match the attribute's pattern.
        public static let validationStringPatternMatching = Code(rawValue: 1680)
        /// The object's row no longer exists.
        public static let objectNotFound = Code(rawValue: 133000)
        /// A persisted relationship points to an object in another store.
        public static let externalRelationship = Code(rawValue: 133010)
        /// Optimistic-locking merge conflict.
        public static let mergeConflict = Code(rawValue: 133020)
        /// Uniqueness-constraint conflict.
        public static let constraintConflict = Code(rawValue: 133021)
        /// The store's schema does not fit its configuration.
        public static let incompatibleSchema = Code(rawValue: 134020)
        /// A store failed to save.
        public static let storeSave = Code(rawValue: 134030)
        /// A store failed to open.
        public static let storeOpen = Code(rawValue: 134080)
        /// A store stayed busy past its deadline.
        public static let storeTimeout = Code(rawValue: 134090)
        /// The model's version hashes do not match the store's.
        public static let incompatibleVersionHash = Code(rawValue: 134100)
        /// A persistent-history token is older than the last purge.
        public static let historyTokenExpired = Code(rawValue: 134301)

        // Strata's own codes (no Core Data equivalent), in the 140000 range.
        /// A model file could not be read or is not a model.
        public static let modelUnreadable = Code(rawValue: 140001)
        /// The model failed validation; `details` lists every problem.
        public static let modelInvalid = Code(rawValue: 140002)
        /// A predicate or expression has a syntax error.
        public static let predicateSyntax = Code(rawValue: 140100)
        /// A predicate or expression does not type-check against the model.
        public static let predicateType = Code(rawValue: 140101)
        /// A construct is recognised but not supported yet.
        public static let unsupported = Code(rawValue: 140102)
        /// A predicate variable has no value at evaluation time.
        public static let unboundVariable = Code(rawValue: 140103)
        /// A value does not fit the attribute it is given to.
        public static let invalidValue = Code(rawValue: 140104)
        /// An access rule does not allow the caller what it asked (Strata's
        /// own; answered PERMISSION_DENIED).
        public static let accessDenied = Code(rawValue: 140201)
    }

    /// The stable code.
    public var code: Code
    /// A human-readable message naming what is at fault.
    public var message: String
    /// Structured details: one line per sub-problem (validation errors,
    /// model diagnostics, conflicts).
    public var details: [String]
    /// For 133020: every optimistic-locking conflict, with both states and versions.
    public var conflicts: [ConflictRecord]
    /// For validation errors (1560–1680): each failing property.
    public var failures: [PropertyFailure]

    /// Creates an error.
    public init(_ code: Code, _ message: String, details: [String] = [], conflicts: [ConflictRecord] = [], failures: [PropertyFailure] = []) {
        self.code = code
        self.message = message
        self.details = details
        self.conflicts = conflicts
        self.failures = failures
    }

    /// `"error 1570: message"` followed by one indented line per detail.
    public var description: String {
        var text = "error \(code.rawValue): \(message)"
        for detail in details { text += "\n  \(detail)" }
        return text
    }
}
