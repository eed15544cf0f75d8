import Foundation
import StorableConfig

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An AppConfig specification file as Foundation's XML parser reads it: an implementation independent of the
/// library's writer.
final class SpecificationReader: NSObject, XMLParserDelegate {
    /// A key of the `dict`.
    struct Key: Equatable {
        var element: String
        var defaults: [String]?
        var constraint: [String: String] = [:]
    }

    /// A field of the `presentation`.
    struct Field: Equatable {
        var type: String
        var label: String?
        var description: String?
        var options: [String: String] = [:]
    }

    var keys: [String: Key] = [:]
    var keyOrder: [String] = []
    var fields: [String: Field] = [:]
    var comments: [String] = []
    var bundleIdentifier: String?
    var version: String?
    var defaultLocale: String?
    var error: Error?

    private var path: [String] = []
    private var text = ""
    private var currentKey: String?
    private var currentField: String?
    private var currentOption: String?

    /// Reads `xml`; `nil` if Foundation's parser finds it malformed.
    static func read(_ xml: String) -> SpecificationReader? {
        let reader = SpecificationReader()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        guard parser.parse(), reader.error == nil else { return nil }
        return reader
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        text = ""
        let parent = path.last
        path.append(elementName)
        switch (parent, elementName) {
        case ("dict", _):
            let name = attributes["keyName"] ?? ""
            keys[name] = Key(element: elementName)
            keyOrder.append(name)
            currentKey = name
        case ("defaultValue", "value"): break
        case (_, "defaultValue"): if let currentKey { keys[currentKey]?.defaults = [] }
        case (_, "constraint"): if let currentKey { keys[currentKey]?.constraint = attributes }
        case ("presentation", "field"):
            let name = attributes["keyName"] ?? ""
            fields[name] = Field(type: attributes["type"] ?? "")
            currentField = name
        case ("options", "option"): currentOption = attributes["value"]
        case (_, "presentation"): defaultLocale = attributes["defaultLocale"]
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        comments.append(comment)
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
        path.removeLast()
        let parent = path.last
        switch (parent, elementName) {
        case ("defaultValue", "value"): if let currentKey { keys[currentKey]?.defaults?.append(text) }
        case ("managedAppConfiguration", "bundleId"): bundleIdentifier = text
        case ("managedAppConfiguration", "version"): version = text
        case ("label", "language"): if let currentField { fields[currentField]?.label = text }
        case ("description", "language"): if let currentField { fields[currentField]?.description = text }
        case ("option", "language"):
            if let currentField, let currentOption { fields[currentField]?.options[currentOption] = text }
        default: break
        }
        text = ""
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        error = parseError
    }
}
