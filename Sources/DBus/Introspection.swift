/// Introspection XML for exported objects.
enum Introspection {
    static let interface = "org.freedesktop.DBus.Introspectable"

    static func xml(for object: DBusObject?, isManager: Bool, children: [String]) -> String {
        var lines = [
            #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN""#,
            #" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#,
            "<node>",
        ]
        lines.append(
            contentsOf: [
                #"  <interface name="org.freedesktop.DBus.Introspectable">"#,
                #"    <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>"#,
                "  </interface>",
            ])
        if let object, object.interfaceDescriptions().contains(where: { !$0.properties.isEmpty }) {
            lines.append(
                contentsOf: [
                    #"  <interface name="org.freedesktop.DBus.Properties">"#,
                    #"    <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>"#,
                    #"    <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>"#,
                    #"    <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>"#,
                    #"    <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>"#,
                    "  </interface>",
                ])
        }
        if isManager {
            lines.append(
                contentsOf: [
                    #"  <interface name="org.freedesktop.DBus.ObjectManager">"#,
                    #"    <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>"#,
                    #"    <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>"#,
                    #"    <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>"#,
                    "  </interface>",
                ])
        }
        for interface in object?.interfaceDescriptions() ?? [] {
            lines.append("  <interface name=\"\(escape(interface.name))\">")
            for method in interface.methods {
                let arguments =
                    method.inputs.map { argument($0.name, $0.type, "in") }
                    + method.outputs.map { argument($0.name, $0.type, "out") }
                lines.append("    <method name=\"\(escape(method.name))\">\(arguments.joined())</method>")
            }
            for signal in interface.signals {
                let arguments = signal.arguments.map { argument($0.name, $0.type, nil) }
                lines.append("    <signal name=\"\(escape(signal.name))\">\(arguments.joined())</signal>")
            }
            for property in interface.properties {
                lines.append(
                    "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.signature))\" access=\"\(property.access.rawValue)\"/>"
                )
            }
            lines.append("  </interface>")
        }
        for child in children { lines.append("  <node name=\"\(escape(child))\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func argument(_ name: String, _ type: DBusType, _ direction: String?) -> String {
        let direction = direction.map { " direction=\"\($0)\"" } ?? ""
        return "<arg name=\"\(escape(name))\" type=\"\(escape(type.signature))\"\(direction)/>"
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
