import StrataStore
import StrataWire
import SwiftProtobuf

/// Encoded rows for gets answered on the event loop: a row's `ObjectState`
/// bytes, kept as the row cache entry's attachment (so they go whenever the
/// snapshot does), spliced into an answer frame assembled around them
/// instead of building and encoding each row's value map again (the
/// largest user-space cost of a get).
enum RowEncoding {
    /// Rows whose encoding is larger are encoded each time, not attached
    /// (the row cache is bounded by count; this bounds it by bytes too).
    static let maximumAttachedBytes = 4096

    /// The encoding of a row as an `ObjectState`, as the async side answers it.
    static func encodedState(of snapshot: Snapshot) throws -> [UInt8] {
        try ServerCore.state(of: snapshot).serializedBytes()
    }

    /// A `ServerFrame` answering request `requestID` with a `RefreshResponse`
    /// whose `objects` are the given encoded `ObjectState`s, in order
    /// (field numbers from `Protocol/strata.proto`: `ServerFrame.request_id`
    /// 1, `ServerFrame.refresh` 15, `RefreshResponse.objects` 1).
    static func refreshAnswer(requestID: UInt64, states: [[UInt8]]) -> [UInt8] {
        var response: [UInt8] = []
        response.reserveCapacity(states.reduce(0) { $0 + $1.count + 6 })
        for state in states {
            response.append(0x0A)   // field 1, length-delimited
            appendVarint(UInt64(state.count), to: &response)
            response.append(contentsOf: state)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(response.count + 16)
        if requestID != 0 {
            frame.append(0x08)  // field 1, varint
            appendVarint(requestID, to: &frame)
        }
        frame.append(0x7A)      // field 15, length-delimited
        appendVarint(UInt64(response.count), to: &frame)
        frame.append(contentsOf: response)
        return frame
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
