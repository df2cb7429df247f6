import BlueZ
import DBus
import ServiceLifecycle
import WorkoutKit

/// The bus connection: it stays open until shutdown, and a lost bus stops the daemon (systemd restarts it).
final class BusService: Service, Sendable {
    let connection: DBusConnection
    let client: BlueZClient

    init(connection: DBusConnection, client: BlueZClient) {
        self.connection = connection
        self.client = client
    }

    struct BusLost: Error, CustomStringConvertible {
        var description: String { "the D-Bus connection was lost; systoled stops so systemd can restart it" }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.connection.waitUntilClosed() }
        let lost = !connection.isConnected
        client.close()
        connection.close()
        if lost, !Task.isShuttingDownGracefully { throw BusLost() }
    }
}

/// The store: everything saved is committed before the daemon exits.
final class StoreService: Service, Sendable {
    let store: any HealthStore

    init(store: any HealthStore) { self.store = store }

    func run() async throws {
        try? await gracefulShutdown()
        try await store.flush()
    }
}
