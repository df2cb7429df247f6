import DBus
import Foundation

/// A change in bluetoothd's object tree, as the ``BlueZClient`` saw it (after updating its cache).
public enum BlueZEvent: Sendable {
    /// An object gained interfaces (a device was found, GATT services were resolved).
    case interfacesAdded(path: String, interfaces: [String: [String: DBusValue]])
    /// An object lost interfaces (a device was removed, GATT objects went with a disconnect).
    case interfacesRemoved(path: String, interfaces: [String])
    /// Properties of one interface changed; for a characteristic, a new `Value` is a notification.
    case propertiesChanged(PropertiesChange)
    /// bluetoothd appeared on the bus (or was restarted) and the cache was rebuilt from `GetManagedObjects`.
    case serviceStarted
    /// bluetoothd left the bus: every object is gone and every notify session ended.
    case serviceStopped
}

/// One `PropertiesChanged` signal, stamped when it was received.
public struct PropertiesChange: Sendable {
    public var path: String
    public var interface: String
    public var changed: [String: DBusValue]
    public var invalidated: [String]
    /// Monotonic receive time (never jumps with the wall clock).
    public var receivedAt: ContinuousClock.Instant
    /// Wall-clock receive time, for storing and showing.
    public var receivedDate: Date
}

extension BlueZEvent {
    /// Whether this is a characteristic's new value (a notification): most consumers of events ignore those,
    /// and with many sensors they are nearly all the traffic.
    public var isCharacteristicValue: Bool {
        if case .propertiesChanged(let change) = self, change.interface == BlueZ.Interface.gattCharacteristic {
            return true
        }
        return false
    }
}
