import DBus
import SystoleTestSupport
import Testing

@Suite struct MethodCallTests {
    static let interface = "org.systole.Test.Calls"

    func exportCalls(on fixture: BusFixture) {
        let object = DBusObject(path: "/test/calls")
        object.addInterface(
            DBusInterface(
                Self.interface,
                methods: [
                    DBusMethod("Fail") { _ throws(DBusError) in
                        throw DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
                    },
                    DBusMethod("Slow") { _ in
                        // Far slower than the caller's timeout, however late a busy machine fires it.
                        try? await Task.sleep(for: .seconds(30))
                        return []
                    },
                    DBusMethod("Add", inputs: [("a", .int32), ("b", .int32)], outputs: [("sum", .int32)]) { call in
                        guard case .int32(let a) = call.arguments[0], case .int32(let b) = call.arguments[1] else {
                            return []
                        }
                        return [.int32(a + b)]
                    },
                ]
            )
        )
        fixture.server.export(object)
    }

    @Test func repliesCarryResults() async throws {
        try await withBus { fixture in
            exportCalls(on: fixture)
            let reply = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/test/calls",
                interface: Self.interface,
                method: "Add",
                arguments: [.int32(40), .int32(2)]
            )
            #expect(reply == [.int32(42)])
        }
    }

    @Test func errorRepliesKeepTheirNameAndMessage() async throws {
        try await withBus { fixture in
            exportCalls(on: fixture)
            let error = await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(
                    destination: fixture.server.uniqueName,
                    path: "/test/calls",
                    interface: Self.interface,
                    method: "Fail"
                )
            }
            #expect(error?.name == "org.bluez.Error.NotReady")
            #expect(error?.message == "Resource Not Ready")
        }
    }

    @Test func wrongArgumentsUnknownMethodsAndObjectsAreStandardErrors() async throws {
        try await withBus { fixture in
            exportCalls(on: fixture)
            let destination = fixture.server.uniqueName
            let wrongArguments = await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(
                    destination: destination,
                    path: "/test/calls",
                    interface: Self.interface,
                    method: "Add",
                    arguments: [.string("forty")]
                )
            }
            #expect(wrongArguments?.is(.invalidArgs) == true)
            let unknownMethod = await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(
                    destination: destination,
                    path: "/test/calls",
                    interface: Self.interface,
                    method: "Nope"
                )
            }
            #expect(unknownMethod?.is(.unknownMethod) == true)
            let unknownObject = await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(
                    destination: destination,
                    path: "/no/such/object",
                    interface: Self.interface,
                    method: "Add"
                )
            }
            #expect(unknownObject?.name.hasPrefix("org.freedesktop.DBus.Error.Unknown") == true)
        }
    }

    @Test func aCallWithoutReplyInTimeFailsWithTimeout() async throws {
        try await withBus { fixture in
            exportCalls(on: fixture)
            let start = ContinuousClock.now
            let error = await #expect(throws: DBusError.self) {
                _ = try await fixture.client.call(
                    destination: fixture.server.uniqueName,
                    path: "/test/calls",
                    interface: Self.interface,
                    method: "Slow",
                    timeout: .milliseconds(200)
                )
            }
            #expect(error?.is(.timeout) == true)
            #expect(ContinuousClock.now - start < .seconds(25), "the timeout, not the answer, ended the call")
            // The connection still works afterwards.
            let reply = try await fixture.client.call(
                destination: fixture.server.uniqueName,
                path: "/test/calls",
                interface: Self.interface,
                method: "Add",
                arguments: [.int32(1), .int32(1)]
            )
            #expect(reply == [.int32(2)])
        }
    }

    @Test func callsFromManyTasksAreAllAnswered() async throws {
        try await withBus { fixture in
            exportCalls(on: fixture)
            let destination = fixture.server.uniqueName
            let client = fixture.client
            try await withThrowingTaskGroup(of: (Int32, [DBusValue]).self) { group in
                for index in Int32(0)..<100 {
                    group.addTask {
                        let reply = try await client.call(
                            destination: destination,
                            path: "/test/calls",
                            interface: Self.interface,
                            method: "Add",
                            arguments: [.int32(index), .int32(1000)]
                        )
                        return (index, reply)
                    }
                }
                for try await (index, reply) in group { #expect(reply == [.int32(index + 1000)]) }
            }
        }
    }

    @Test func busNamesCanBeOwnedOnce() async throws {
        try await withBus { fixture in
            let first = try await fixture.server.requestName("org.systole.Test.Owner")
            let second = try await fixture.client.requestName("org.systole.Test.Owner")
            let owner = try await fixture.client.nameOwner(of: "org.systole.Test.Owner")
            let nobody = try await fixture.client.nameOwner(of: "org.systole.Test.Nobody")
            #expect(first == .primaryOwner)
            #expect(second == .exists)
            #expect(owner == fixture.server.uniqueName)
            #expect(nobody == nil)
            try await fixture.server.releaseName("org.systole.Test.Owner")
            let afterRelease = try await fixture.client.requestName("org.systole.Test.Owner")
            #expect(afterRelease == .primaryOwner)
        }
    }
}

@Suite struct ConnectionLossTests {
    @Test func connectingToNoBusIsAClearError() async throws {
        let error = await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/systole-test-bus"))
        }
        #expect(error?.message.contains("cannot connect to the unix:path=/nonexistent/systole-test-bus bus") == true)
    }

    @Test func whenTheBusDiesPendingCallsFailAndStreamsEnd() async throws {
        let fixture = try await BusFixture.start()
        defer { fixture.stop() }
        fixture.exportSlowMethod()
        let signals = try await fixture.client.signals(matching: DBusMatchRule(interface: "org.systole.Test.Slow"))
        let destination = fixture.server.uniqueName
        let client = fixture.client
        async let call: Result<[DBusValue], DBusError> = {
            do {
                return .success(
                    try await client.call(
                        destination: destination,
                        path: "/test/slow",
                        interface: "org.systole.Test.Slow",
                        method: "Wait"
                    )
                )
            } catch let error as DBusError { return .failure(error) } catch {
                return .failure(DBusError(.failed, "\(error)"))
            }
        }()
        try await fixture.waitForASlowCall()
        fixture.bus.stop()
        let result = await call
        guard case .failure(let error) = result else {
            Issue.record("the call should fail when the bus goes away")
            return
        }
        #expect(error.is(.disconnected))
        await #expect(throws: DBusError.self) {
            for try await _ in signals {}
        }
        #expect(!fixture.client.isConnected)
        await #expect(throws: DBusError.self) {
            _ = try await client.nameOwner(of: "org.bluez")
        }
    }
}
