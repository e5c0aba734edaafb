import Testing
@testable import StrataSQLite

/// The run of tokens a store instance wrote, which its change watcher
/// passes over: never one that hides another writer's transaction.
@Suite struct SQLiteOwnHistoryTests {
    @Test func nothingIsOwnBeforeACommit() {
        let own = SQLiteOwnHistory()
        #expect(!own.mayCover(after: 0))
        #expect(!own.wroteAll(after: 0, through: 1))
    }

    /// A store's file decides the tokens: the largest one seen is
    /// answered, not an overflow.
    @Test func theLargestTokenIsAnsweredWithoutOverflow() {
        let own = SQLiteOwnHistory()
        own.noteCommitted(5...9)
        #expect(own.mayCover(after: .max))
        #expect(!own.wroteAll(after: .max, through: .max))
        #expect(!own.passesOver(after: .max, through: .max, purgedThrough: 0))
    }

    @Test func groupsThatFollowEachOtherMakeOneRun() {
        let own = SQLiteOwnHistory()
        own.noteCommitted(1...3)
        own.noteCommitted(4...4)
        own.noteCommitted(5...9)
        #expect(own.wroteAll(after: 0, through: 9))
        #expect(own.wroteAll(after: 4, through: 9))
        // Nothing new, or a snapshot older than the run's end: read.
        #expect(!own.wroteAll(after: 9, through: 9))
        #expect(!own.wroteAll(after: 0, through: 5))
        // A snapshot newer than the run (another writer after it): read.
        #expect(!own.wroteAll(after: 3, through: 10))
    }

    @Test func anotherWritersTransactionStartsANewRun() {
        let own = SQLiteOwnHistory()
        own.noteCommitted(1...3)
        // Token 4 is another writer's: this group began after it.
        own.noteCommitted(5...6)
        #expect(!own.mayCover(after: 3))
        #expect(own.mayCover(after: 4))
        #expect(!own.wroteAll(after: 3, through: 6))
        #expect(!own.wroteAll(after: 0, through: 6))
        #expect(own.wroteAll(after: 4, through: 6))
        #expect(own.wroteAll(after: 5, through: 6))
    }

    /// A purge past the last token seen is left to the read, which
    /// answers 134301, even over the instance's own commits.
    @Test func aPurgePastTheLastTokenSeenIsNotPassedOver() {
        let own = SQLiteOwnHistory()
        own.noteCommitted(2...4)
        #expect(own.passesOver(after: 1, through: 4, purgedThrough: 0))
        #expect(own.passesOver(after: 1, through: 4, purgedThrough: 1))
        #expect(!own.passesOver(after: 1, through: 4, purgedThrough: 2))
        #expect(!own.passesOver(after: 1, through: 4, purgedThrough: 4))
    }
}
