import DBus
import Glibc
import Testing

/// Every type of the D-Bus type system, sent through a real dbus-daemon and echoed back.
@Suite struct ValueRoundTripTests {
    @Test func everyTypeEchoesThroughTheBusAsAnArgumentAndInAVariant() async throws {
        try await withBus { fixture in
            let object = DBusObject(path: "/test/echo")
            var methods: [DBusMethod] = [
                DBusMethod("EchoVariant", inputs: [("value", .variant)], outputs: [("value", .variant)]) { call in
                    call.arguments
                }
            ]
            for (index, value) in sampleValues.enumerated() {
                methods.append(
                    DBusMethod("Echo\(index)", inputs: [("value", value.type)], outputs: [("value", value.type)]) {
                        call in call.arguments
                    }
                )
            }
            object.addInterface(DBusInterface("org.systole.Test.Echo", methods: methods))
            fixture.server.export(object)

            for (index, value) in sampleValues.enumerated() {
                let direct = try await fixture.client.call(
                    destination: fixture.server.uniqueName,
                    path: "/test/echo",
                    interface: "org.systole.Test.Echo",
                    method: "Echo\(index)",
                    arguments: [value]
                )
                #expect(direct == [value], "\(value.type)")
                let wrapped = try await fixture.client.call(
                    destination: fixture.server.uniqueName,
                    path: "/test/echo",
                    interface: "org.systole.Test.Echo",
                    method: "EchoVariant",
                    arguments: [.variant(value)]
                )
                #expect(wrapped == [.variant(value)], "\(value.type)")
            }
        }
    }

    @Test func aFileDescriptorArrivesAsANewDescriptorForTheSameFile() async throws {
        try await withBus { fixture in
            let object = DBusObject(path: "/test/fd")
            object.addInterface(
                DBusInterface(
                    "org.systole.Test.FD",
                    methods: [
                        DBusMethod("Take", inputs: [("fd", .unixFD)], outputs: [("fd", .unixFD)]) { $0.arguments }
                    ]
                )
            )
            fixture.server.export(object)
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer {
                close(fds[0])
                close(fds[1])
            }
            let reply = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/test/fd",
                interface: "org.systole.Test.FD",
                method: "Take",
                arguments: [.unixFD(fds[1])]
            )
            guard case .unixFD(let received) = reply.first else {
                Issue.record("no fd in \(reply)")
                return
            }
            #expect(received != fds[1])
            var byte: UInt8 = 42
            #expect(write(received, &byte, 1) == 1)
            close(received)
            var read: UInt8 = 0
            #expect(Glibc.read(fds[0], &read, 1) == 1)
            #expect(read == 42)
        }
    }

    @Test func signaturesParseAndPrintBack() throws {
        for text in ["y", "a{sv}", "a{oa{sa{sv}}}", "(iaysv)", "aay", "a(ov)", "h"] {
            #expect(try DBusType(signature: text).signature == text)
        }
        #expect(try DBusType.parse(signature: "sa{sv}as").map(\.signature) == ["s", "a{sv}", "as"])
        for bad in ["", "a", "{sv}", "a{vs}", "()", "(i", "z", "a{sv", "ss"] {
            #expect(throws: DBusError.self, "\(bad)") { try DBusType(signature: bad) }
        }
    }

    @Test func invalidValuesAreErrorsNotCrashes() async throws {
        try await withBus { fixture in
            for bad: DBusValue in [
                .objectPath("not/a/path"), .signature("a{"), .string("nul\u{0}inside"),
                .array(.int32, [.string("x")]), .structure([]),
            ] {
                await #expect(throws: DBusError.self, "\(bad)") {
                    _ = try await fixture.client.call(
                        destination: "org.freedesktop.DBus",
                        path: "/org/freedesktop/DBus",
                        interface: "org.freedesktop.DBus",
                        method: "GetId",
                        arguments: [bad]
                    )
                }
            }
            await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(destination: nil, path: "bad path", interface: nil, method: "X")
            }
        }
    }
}
