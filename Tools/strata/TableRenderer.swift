/// Aligned columns for people: a header, a rule, one line per row.
///
/// Widths count terminal cells (``TerminalWidth``: wide characters and
/// emoji take two, combining marks none); styles are applied after
/// padding, so escape sequences never disturb the alignment.
struct TableRenderer {
    /// One column.
    struct Column {
        var title: String
        /// Numbers read better right-aligned.
        var rightAligned = false
    }

    var columns: [Column]
    var rows: [[String]] = []
    var style: Style
    /// Whether the header and its rule are printed (`--no-header` leaves
    /// them out).
    var showsHeader = true

    /// The table, ending with a newline (nothing but the header for no rows).
    func render() -> String {
        var widths = columns.map { TerminalWidth.of($0.title) }
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], TerminalWidth.of(cell))
            }
        }
        var lines: [String] = []
        if showsHeader {
            let header = columns.enumerated().map { index, column in
                style.bold(pad(column.title, widths[index], right: column.rightAligned, last: index == columns.count - 1))
            }
            lines.append(header.joined(separator: "  "))
            lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        }
        for row in rows {
            let cells = columns.indices.map { index in
                pad(index < row.count ? row[index] : "", widths[index], right: columns[index].rightAligned, last: index == columns.count - 1)
            }
            lines.append(cells.joined(separator: "  "))
        }
        return lines.isEmpty ? "" : lines.map { $0.trailingSpacesRemoved }.joined(separator: "\n") + "\n"
    }

    private func pad(_ text: String, _ width: Int, right: Bool, last: Bool) -> String {
        let padding = String(repeating: " ", count: max(0, width - TerminalWidth.of(text)))
        if right { return padding + text }
        return last ? text : text + padding
    }
}

extension String {
    /// The string without trailing spaces.
    fileprivate var trailingSpacesRemoved: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
