import StrataModel

extension StrataError.Code {
    /// The gRPC-style status a Strata error code is answered with.
    public var statusCode: Strata_V1_StatusCode {
        switch self {
        case .validationRelationshipDeniedDelete: .failedPrecondition
        case .objectNotFound: .notFound
        case .mergeConflict: .aborted
        case .constraintConflict: .alreadyExists
        case .incompatibleSchema, .incompatibleVersionHash, .modelUnreadable, .modelInvalid: .failedPrecondition
        case .storeSave: .internal
        case .storeOpen, .storeTimeout: .unavailable
        case .historyTokenExpired: .outOfRange
        case .accessDenied: .permissionDenied
        default:
            // Validation (1550–1680), cross-store relationships (133010),
            // predicates and values (1401xx): the request is at fault.
            .invalidArgument
        }
    }
}

extension StrataError {
    /// The error as a wire status, with its details, conflicts and failures.
    public var status: Strata_V1_Status {
        Strata_V1_Status.with {
            $0.code = code.statusCode
            $0.strataCode = Int32(clamping: code.rawValue)
            $0.message = message
            $0.details = details
            $0.conflicts = conflicts.map(\.wire)
            $0.propertyErrors = failures.map(\.wire)
        }
    }
}

extension ConflictRecord {
    /// The conflict as it travels.
    public var wire: Strata_V1_Conflict {
        Strata_V1_Conflict.with {
            $0.objectID = objectID.uriRepresentation
            $0.expectedVersion = expectedVersion
            $0.currentVersion = currentVersion
            $0.cachedValues = cachedValues.mapValues(\.wire)
            if let persisted = persistedValues {
                $0.persistedValues = persisted.mapValues(\.wire)
            } else {
                $0.persistedDeleted = true
            }
            $0.localChanges = localChanges.mapValues(\.wire)
        }
    }
}

extension PropertyFailure {
    /// The failure as it travels.
    public var wire: Strata_V1_PropertyError {
        Strata_V1_PropertyError.with {
            $0.objectID = objectID.uriRepresentation
            $0.entity = entityName
            $0.property = property
            $0.strataCode = Int32(clamping: code.rawValue)
            $0.message = message
        }
    }
}
