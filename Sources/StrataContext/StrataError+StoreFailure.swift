import StrataModel
import StrataStore

extension StrataError {
    /// A store's failure to save, naming it and the stores (display names)
    /// that committed their part of the save before it.
    static func storeFailure(_ error: any Error, in store: any PersistentStore, committed: [String]) -> StrataError {
        let message = "save failed in store \(store.storeDescription.displayName)" + (committed.isEmpty ? "; nothing was written" : "; stores \(committed.joined(separator: ", ")) committed") + "; the context keeps the unsaved changes: \(error)"
        let code = (error as? StrataError)?.code ?? .storeSave
        return StrataError(code, message, details: (error as? StrataError)?.details ?? [])
    }

    /// The error for validation problems: the problem's own code for one,
    /// 1560 listing each for several.
    static func validation(_ problems: [PropertyFailure]) -> StrataError {
        if problems.count == 1 {
            return StrataError(problems[0].code, problems[0].message, failures: problems)
        }
        return StrataError(.multipleValidationErrors, "\(problems.count) validation errors; nothing was saved", details: problems.map(\.description), failures: problems)
    }
}
