import Foundation
import Testing
import StrataModel

@Suite struct TemporaryKeySourceTests {
    @Test func keysMadeLaterHaveLargerSequenceNumbers() throws {
        let keys = (0..<1000).map { _ in TemporaryKeySource.next() }
        let numbers = try keys.map { try #require(TemporaryKeySource.sequenceNumber(of: $0)) }
        for (earlier, later) in zip(numbers, numbers.dropFirst()) { #expect(later > earlier) }
        #expect(Set(keys).count == keys.count)
    }

    @Test func otherUUIDsHaveNoSequenceNumber() {
        #expect(TemporaryKeySource.sequenceNumber(of: UUID()) == nil)
        // This process's prefix with the variant bits changed is not a key it made.
        var bytes = TemporaryKeySource.next().uuid
        bytes.8 &= 0x3F
        #expect(TemporaryKeySource.sequenceNumber(of: UUID(uuid: bytes)) == nil)
        var other = TemporaryKeySource.next().uuid
        other.0 &+= 1
        #expect(TemporaryKeySource.sequenceNumber(of: UUID(uuid: other)) == nil)
    }
}
