/// When requests are due and how many may be in flight, with a ramp-up
/// (`--ramp`): the load grows linearly from nothing to its full level over
/// the ramp, as k6's ramping stages do.
struct LoadShape: Sendable {
    /// Requests per second at full load (open loop), nil for closed loop.
    let rate: Double?
    /// Seconds the load takes to reach its full level (0: at once).
    let ramp: Double
    /// Seconds an answer may take before the request counts as failed
    /// (`DEADLINE_EXCEEDED`), nil for no limit.
    let timeout: Double?

    /// Seconds after the start at which open-loop request `serial` is due:
    /// the rate grows linearly over the ramp (so `rate * t² / (2 * ramp)`
    /// requests are due by `t` within it), then stays.
    func due(serial: Int) -> Double {
        guard let rate, rate > 0 else { return 0 }
        let k = Double(serial)
        guard ramp > 0 else { return k / rate }
        let rampRequests = rate * ramp / 2
        if k <= rampRequests { return (2 * ramp * k / rate).squareRoot() }
        return ramp + (k - rampRequests) / rate
    }

    /// How many of `slots` requests may be in flight `elapsed` seconds
    /// after the start (closed loop): from none, all once the ramp is over.
    func slots(_ slots: Int, elapsed: Double) -> Int {
        guard ramp > 0, elapsed < ramp else { return slots }
        return max(0, min(slots, Int((Double(slots) * elapsed / ramp).rounded(.up))))
    }

    /// The share of connection `index` (of `connections`) in `allowed`
    /// requests in flight, dealt round-robin as the slots are.
    static func share(of allowed: Int, connection index: Int, of connections: Int) -> Int {
        allowed / connections + (index < allowed % connections ? 1 : 0)
    }
}
