/// One element of a parsed XML document: its name, attributes, the line its
/// start tag is on, and its child elements (text content is not kept; model
/// files carry everything in attributes).
struct XMLElementNode: Sendable, Hashable {
    /// The element's name.
    var name: String
    /// The element's attributes, entity references already decoded.
    var attributes: [String: String]
    /// The 1-based line of the start tag, as reported by the parser.
    var line: Int
    /// Child elements in document order.
    var children: [XMLElementNode]

    /// The value of an attribute, if present.
    subscript(attribute key: String) -> String? {
        attributes[key]
    }

    /// Child elements with the given name, in document order.
    func children(named name: String) -> [XMLElementNode] {
        children.filter { $0.name == name }
    }

    /// The first child element with the given name.
    func child(named name: String) -> XMLElementNode? {
        children.first { $0.name == name }
    }
}
