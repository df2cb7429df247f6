import DBus
import Synchronization
import SystoleTestSupport
import Testing

@Suite struct ExportedObjectTests {
    static let adapterInterface = "org.bluez.Adapter1"

    func makeAdapter() -> DBusObject {
        let adapter = DBusObject(path: "/org/bluez/hci0")
        adapter.addInterface(
            DBusInterface(
                Self.adapterInterface,
                properties: [
                    DBusProperty("Address", .string),
                    DBusProperty("Powered", .boolean, access: .readwrite),
                    DBusProperty("Alias", .string, access: .readwrite) { value throws(DBusError) in
                        if value.string?.isEmpty == true {
                            throw DBusError(name: "org.bluez.Error.InvalidArguments", message: "empty alias")
                        }
                    },
                ]
            ),
            values: ["Address": .string("00:AA:01:00:00:01"), "Powered": .boolean(false), "Alias": .string("hci0")]
        )
        return adapter
    }

    func properties(_ fixture: BusFixture, _ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await fixture.client.call(
            destination: fixture.server.uniqueName,
            path: "/org/bluez/hci0",
            interface: "org.freedesktop.DBus.Properties",
            method: method,
            arguments: arguments
        )
    }

    @Test func getGetAllAndSetBehaveLikeTheStandardInterface() async throws {
        try await withBus { fixture in
            fixture.server.export(makeAdapter())
            let all = try await properties(fixture, "GetAll", [.string(Self.adapterInterface)])
            #expect(all.first?.propertyMap?["Address"] == .string("00:AA:01:00:00:01"))
            #expect(all.first?.propertyMap?.count == 3)
            let powered = try await properties(fixture, "Get", [.string(Self.adapterInterface), .string("Powered")])
            #expect(powered == [.variant(.boolean(false))])

            let changes = try await fixture.client.signals(
                matching: DBusMatchRule(
                    path: "/org/bluez/hci0",
                    interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged"
                )
            )
            _ = try await properties(
                fixture,
                "Set",
                [.string(Self.adapterInterface), .string("Powered"), .variant(.boolean(true))]
            )
            var iterator = changes.makeAsyncIterator()
            let changed = try #require(try await iterator.next())
            #expect(changed.arguments[0] == .string(Self.adapterInterface))
            #expect(changed.arguments[1].propertyMap == ["Powered": .boolean(true)])
            #expect(changed.arguments[2] == .strings([]))
            let after = try await properties(fixture, "Get", [.string(Self.adapterInterface), .string("Powered")])
            #expect(after == [.variant(.boolean(true))])
        }
    }

    @Test func setRefusesReadOnlyWrongTypeAndWhatTheObjectRejects() async throws {
        try await withBus { fixture in
            fixture.server.export(makeAdapter())
            let readOnly = await #expect(throws: DBusError.self) {
                _ = try await properties(
                    fixture,
                    "Set",
                    [.string(Self.adapterInterface), .string("Address"), .variant(.string("x"))]
                )
            }
            #expect(readOnly?.is(.propertyReadOnly) == true)
            let wrongType = await #expect(throws: DBusError.self) {
                _ = try await properties(
                    fixture,
                    "Set",
                    [.string(Self.adapterInterface), .string("Powered"), .variant(.int32(1))]
                )
            }
            #expect(wrongType?.is(.invalidArgs) == true)
            let refused = await #expect(throws: DBusError.self) {
                _ = try await properties(
                    fixture,
                    "Set",
                    [.string(Self.adapterInterface), .string("Alias"), .variant(.string(""))]
                )
            }
            #expect(refused?.name == "org.bluez.Error.InvalidArguments")
            let unknown = await #expect(throws: DBusError.self) {
                _ = try await properties(fixture, "Get", [.string(Self.adapterInterface), .string("Nope")])
            }
            #expect(unknown?.is(.unknownProperty) == true)
            let alias = try await properties(fixture, "Get", [.string(Self.adapterInterface), .string("Alias")])
            #expect(alias == [.variant(.string("hci0"))])
        }
    }

    @Test func absentPropertiesAreInvalidatedAndLeftOutOfGetAll() async throws {
        try await withBus { fixture in
            let device = DBusObject(path: "/org/bluez/hci0/dev_00_11_22_33_44_55")
            device.addInterface(
                DBusInterface("org.bluez.Device1", properties: [DBusProperty("RSSI", .int16)]),
                values: ["RSSI": .int16(-60)]
            )
            fixture.server.export(device)
            let changes = try await fixture.client.signals(matching: DBusMatchRule(member: "PropertiesChanged"))
            device.setProperty("org.bluez.Device1", "RSSI", nil)
            var iterator = changes.makeAsyncIterator()
            let signal = try #require(try await iterator.next())
            #expect(signal.arguments[1].propertyMap == [:])
            #expect(signal.arguments[2] == .strings(["RSSI"]))
            let all = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: device.path,
                interface: "org.freedesktop.DBus.Properties",
                method: "GetAll",
                arguments: [.string("org.bluez.Device1")]
            )
            #expect(all.first?.propertyMap == [:])
        }
    }

    /// A provided property is made at each read (Get, GetAll, GetManagedObjects), and its change can be announced
    /// by name alone, beside other properties' values in the same signal.
    @Test func providedPropertiesAreMadeWhenReadAndMayBeAnnouncedByName() async throws {
        try await withBus { fixture in
            fixture.server.addObjectManager(at: "/")
            let reads = Atomic<Int>(0)
            let object = DBusObject(path: "/org/example/Counter")
            let interface = "org.example.Counter1"
            object.addInterface(
                DBusInterface(interface, properties: [DBusProperty("Count", .uint32), DBusProperty("Label", .string)]),
                values: ["Label": .string("a")]
            )
            object.provideProperty(interface, "Count") {
                .uint32(UInt32(reads.add(1, ordering: .relaxed).newValue))
            }
            fixture.server.export(object)
            let get = { () async throws -> DBusValue? in
                try await fixture.client.call(
                    destination: fixture.server.uniqueName,
                    path: object.path,
                    interface: "org.freedesktop.DBus.Properties",
                    method: "Get",
                    arguments: [.string(interface), .string("Count")]
                ).first
            }
            let first = try await get()
            #expect(try await get() != first)
            let all = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: object.path,
                interface: "org.freedesktop.DBus.Properties",
                method: "GetAll",
                arguments: [.string(interface)]
            )
            #expect(all.first?.propertyMap?["Count"] != nil && all.first?.propertyMap?["Label"] == .string("a"))
            let managed = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/",
                interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects"
            )
            let objects = managed.first?.dictionaryEntries ?? []
            let interfaces = objects.first { $0.key == .objectPath(object.path) }?.value.dictionaryEntries ?? []
            #expect(interfaces.first { $0.key == .string(interface) }?.value.propertyMap?["Count"] != nil)

            let changes = try await fixture.client.signals(matching: DBusMatchRule(member: "PropertiesChanged"))
            object.setProperties(interface, ["Label": .string("b")], invalidating: ["Count"])
            var iterator = changes.makeAsyncIterator()
            let signal = try #require(try await iterator.next())
            #expect(signal.arguments[1].propertyMap == ["Label": .string("b")])
            #expect(signal.arguments[2] == .strings(["Count"]))
            // Nothing but a name to announce is still announced.
            object.setProperties(interface, ["Label": .string("b")], invalidating: ["Count"])
            let named = try #require(try await iterator.next())
            #expect(named.arguments[1].propertyMap == [:] && named.arguments[2] == .strings(["Count"]))
        }
    }

    @Test func objectManagerListsAndAnnouncesObjects() async throws {
        try await withBus { fixture in
            fixture.server.addObjectManager(at: "/")
            fixture.server.export(makeAdapter())
            let managed = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/",
                interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects"
            )
            let objects = try #require(managed.first?.dictionaryEntries)
            #expect(objects.map(\.key) == [.objectPath("/org/bluez/hci0")])
            let interfaces = try #require(objects.first?.value.dictionaryEntries)
            #expect(
                Set(interfaces.compactMap(\.key.string)) == [
                    Self.adapterInterface, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                ]
            )

            // Subscribe after the GetManagedObjects round trip: the server's loop runs queued exports before it
            // answers, so the adapter's own InterfacesAdded is not in this stream.
            let announcements = try await fixture.client.signals(
                matching: DBusMatchRule(path: "/", interface: "org.freedesktop.DBus.ObjectManager")
            )

            let device = DBusObject(path: "/org/bluez/hci0/dev_00_11_22_33_44_55")
            device.addInterface(
                DBusInterface("org.bluez.Device1", properties: [DBusProperty("Name", .string)]),
                values: ["Name": .string("Polar H10 1A2B3C4D")]
            )
            fixture.server.export(device)
            device.addInterface(
                DBusInterface("org.bluez.Battery1", properties: [DBusProperty("Percentage", .byte)]),
                values: ["Percentage": .byte(87)]
            )
            device.removeInterface("org.bluez.Battery1")
            fixture.server.unexport(path: device.path)

            var iterator = announcements.makeAsyncIterator()
            let added = try #require(try await iterator.next())
            #expect(added.member == "InterfacesAdded")
            #expect(added.arguments[0] == .objectPath(device.path))
            let addedInterfaces = try #require(added.arguments[1].dictionaryEntries)
            let deviceProperties = addedInterfaces.first { $0.key == .string("org.bluez.Device1") }?.value
            #expect(deviceProperties?.propertyMap == ["Name": .string("Polar H10 1A2B3C4D")])
            let battery = try #require(try await iterator.next())
            #expect(battery.member == "InterfacesAdded")
            #expect(battery.arguments[1].dictionaryEntries?.map(\.key) == [.string("org.bluez.Battery1")])
            let batteryGone = try #require(try await iterator.next())
            #expect(batteryGone.member == "InterfacesRemoved")
            #expect(batteryGone.arguments[1] == .strings(["org.bluez.Battery1"]))
            let removed = try #require(try await iterator.next())
            #expect(removed.member == "InterfacesRemoved")
            #expect(removed.arguments[0] == .objectPath(device.path))
            #expect(removed.arguments[1].strings?.contains("org.bluez.Device1") == true)
        }
    }

    @Test func introspectionDescribesInterfacesAndChildren() async throws {
        try await withBus { fixture in
            let adapter = makeAdapter()
            adapter.addInterface(
                DBusInterface(
                    "org.bluez.Example1",
                    methods: [
                        DBusMethod("Ping", inputs: [("text", .string)], outputs: [("echo", .string)]) { $0.arguments }
                    ],
                    signals: [DBusSignalDescription("Pong", arguments: [("text", .string)])]
                )
            )
            fixture.server.export(adapter)
            let xml = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/org/bluez/hci0",
                interface: "org.freedesktop.DBus.Introspectable",
                method: "Introspect"
            )
            let text = try #require(xml.first?.string)
            #expect(text.contains(#"<interface name="org.bluez.Adapter1">"#))
            #expect(text.contains(#"<property name="Powered" type="b" access="readwrite"/>"#))
            #expect(
                text.contains(
                    #"<method name="Ping"><arg name="text" type="s" direction="in"/><arg name="echo" type="s" direction="out"/></method>"#
                )
            )
            #expect(text.contains(#"<signal name="Pong"><arg name="text" type="s"/></signal>"#))
            let parent = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/org/bluez",
                interface: "org.freedesktop.DBus.Introspectable",
                method: "Introspect"
            )
            #expect(parent.first?.string?.contains(#"<node name="hci0"/>"#) == true)
        }
    }
}
