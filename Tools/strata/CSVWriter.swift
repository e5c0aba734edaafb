/// CSV as RFC 4180 writes it: fields separated by commas, a field quoted
/// when it holds a comma, a quote, a line break or leading or trailing
/// spaces (quotes doubled inside), lines ended by CRLF.
enum CSVWriter {
    /// One record.
    static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// One field, quoted when it must be.
    static func field(_ text: String) -> String {
        let needsQuotes = text.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
            || text.first == " " || text.last == " "
        guard needsQuotes else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
