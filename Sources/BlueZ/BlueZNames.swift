/// Names bluetoothd uses on the bus.
public enum BlueZ {
    /// The well-known bus name bluetoothd owns.
    public static let service = "org.bluez"
    /// The object that holds `AgentManager1` (and `ProfileManager1`).
    public static let rootPath = "/org/bluez"

    /// Interface names, as in BlueZ's doc/*.txt.
    public enum Interface {
        public static let adapter = "org.bluez.Adapter1"
        public static let device = "org.bluez.Device1"
        public static let gattService = "org.bluez.GattService1"
        public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
        public static let gattDescriptor = "org.bluez.GattDescriptor1"
        public static let gattManager = "org.bluez.GattManager1"
        public static let gattProfile = "org.bluez.GattProfile1"
        public static let agentManager = "org.bluez.AgentManager1"
        public static let agent = "org.bluez.Agent1"
        public static let objectManager = "org.freedesktop.DBus.ObjectManager"
        public static let properties = "org.freedesktop.DBus.Properties"
    }
}
