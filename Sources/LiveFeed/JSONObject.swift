/// A JSON object written as text, for what the live outputs send every second (the page's events, MQTT's
/// values): strings (escaped as RFC 8259 asks), whole numbers, finite decimals, booleans, null, and nested objects
/// and arrays already written. Foundation's encoders cost more than the rest of an output together with a hundred
/// sensors. The keys are the caller's constants.
public struct JSONObject {
    private var body = ""

    public init() {}

    public var text: String { "{" + body + "}" }

    private mutating func key(_ key: String) {
        if !body.isEmpty { body += "," }
        body += "\"" + key + "\":"
    }

    public mutating func add(_ name: String, _ value: String?) {
        key(name)
        guard let value else {
            body += "null"
            return
        }
        body += Self.quoted(value)
    }

    public mutating func add(_ name: String, _ value: Int?) {
        key(name)
        body += value.map(String.init) ?? "null"
    }

    public mutating func add(_ name: String, _ value: Double?) {
        key(name)
        body += value.flatMap { $0.isFinite ? "\($0)" : nil } ?? "null"
    }

    public mutating func add(_ name: String, _ value: Bool) {
        key(name)
        body += value ? "true" : "false"
    }

    /// Adds `json`, an object or array already written.
    public mutating func add(_ name: String, json: String) {
        key(name)
        body += json
    }

    /// Adds the value unless it is nil (the key is left out, as `Codable` leaves out a nil optional).
    public mutating func addIfPresent(_ name: String, _ value: String?) { if let value { add(name, value) } }
    public mutating func addIfPresent(_ name: String, _ value: Int?) { if let value { add(name, value) } }
    public mutating func addIfPresent(_ name: String, _ value: Double?) { if let value { add(name, value) } }

    /// `objects` as a JSON array.
    public static func array(_ objects: [JSONObject]) -> String {
        "[" + objects.map(\.text).joined(separator: ",") + "]"
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    public static func quoted(_ text: String) -> String {
        // Most strings (states, addresses, most names) need no escape: copied whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
            return "\"" + text + "\""
        }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
