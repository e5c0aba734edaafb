import Foundation

/// ISO-8601 dates as `strata` reads and writes them, without Foundation's
/// formatters (whose leniency differs between platforms).
///
/// Reads `YYYY-MM-DD`, optionally followed by `T` (or a space) and
/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction`, optionally followed by `Z`
/// or an offset `±HH:MM` / `±HHMM` / `±HH`; without a zone the time is UTC.
/// Writes UTC with `Z`, with milliseconds (or microseconds when needed)
/// only when the date has a fractional second.
public enum ISO8601 {
    /// Seconds from 1970-01-01 to 2001-01-01, Core Data's reference date.
    private static let referenceOffset: Int64 = 978_307_200

    /// The date `text` names, or nil when it is not ISO-8601.
    public static func parse(_ text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(exactly: 4), scanner.take("-"),
              let month = scanner.digits(exactly: 2), scanner.take("-"),
              let day = scanner.digits(exactly: 2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offsetSeconds = 0
        if scanner.take("T") || scanner.take("t") || scanner.take(" ") {
            guard let h = scanner.digits(exactly: 2), scanner.take(":"), let m = scanner.digits(exactly: 2) else { return nil }
            hour = h
            minute = m
            if scanner.take(":") {
                guard let s = scanner.digits(exactly: 2) else { return nil }
                second = s
                if scanner.take(".") || scanner.take(",") {
                    let digits = scanner.digitRun()
                    guard !digits.isEmpty, digits.count <= 9, let value = Double("0." + digits) else { return nil }
                    fraction = value
                }
            }
            guard hour <= 23, minute <= 59, second <= 60 else { return nil }
            if scanner.take("Z") || scanner.take("z") {
                offsetSeconds = 0
            } else if let sign = scanner.sign() {
                guard let oh = scanner.digits(exactly: 2), oh <= 23 else { return nil }
                var om = 0
                if scanner.take(":") {
                    guard let value = scanner.digits(exactly: 2) else { return nil }
                    om = value
                } else if let value = scanner.digits(exactly: 2) {
                    om = value
                }
                guard om <= 59 else { return nil }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            }
        }
        guard scanner.atEnd else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let unixSeconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return Date(timeIntervalSinceReferenceDate: Double(unixSeconds - referenceOffset) + fraction)
    }

    /// `2024-05-01T12:30:00Z`, or `…:00.250Z` with a fractional second.
    public static func format(_ date: Date) -> String {
        let reference = date.timeIntervalSinceReferenceDate
        guard reference.isFinite, abs(reference) < 1e15 else { return String(reference) }
        var whole = reference.rounded(.down)
        var micros = Int(((reference - whole) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            whole += 1
            micros -= 1_000_000
        }
        let unix = Int64(whole) + referenceOffset
        let days = Int(floorDiv(unix, 86_400))
        let secondsOfDay = Int(unix - Int64(days) * 86_400)
        let (year, month, day) = civilFromDays(days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(secondsOfDay / 3600, 2) + ":" + pad(secondsOfDay / 60 % 60, 2) + ":" + pad(secondsOfDay % 60, 2)
        if micros != 0 {
            text += micros % 1000 == 0 ? "." + pad(micros / 1000, 3) : "." + pad(micros, 6)
        }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(abs(value))
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day number since 1970-01-01.
    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A cursor over ASCII bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, index < bytes.count, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }

        mutating func digits(exactly count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }

        mutating func digitRun() -> String {
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}
