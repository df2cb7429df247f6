import BlueZ

/// BlueZ's `Device` under a name that does not clash with WorkoutKit's `Device` (the sensor a sample came from).
typealias BluetoothDevice = Device
