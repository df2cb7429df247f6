import BlueZ
import Synchronization

/// Which sensors are taken, shared by the ``HeartRateSensor``s of one owner (``HeartRateSensor/Options/claims``), so
/// that each keeps a sensor of its own.
///
/// A sensor created for an address reserves it: no ``SensorTarget/anyHeartRateSensor`` sensor takes it. An "any"
/// sensor claims the sensor it chooses, and holds the claim until its ``HeartRateSensor/run()`` ends; other "any"
/// sensors skip it. Two "any" entries thus stream from two different sensors, never both from one.
public final class SensorClaims: Sendable {
    private let state = Mutex(State())

    private struct State {
        var reserved: Set<BluetoothAddress> = []
        var claimed: [BluetoothAddress: ObjectIdentifier] = [:]
    }

    public init() {}

    /// Keeps `address` for the sensor configured with it.
    public func reserve(_ address: BluetoothAddress) {
        _ = state.withLock { $0.reserved.insert(address) }
    }

    /// The addresses claimed by "any" sensors.
    public var claimed: Set<BluetoothAddress> { state.withLock { Set($0.claimed.keys) } }

    /// Claims the first of `candidates` that is neither reserved nor claimed by another holder, for `holder`.
    func claimFirst(of candidates: [BluetoothAddress], for holder: ObjectIdentifier) -> BluetoothAddress? {
        state.withLock { state in
            for address in candidates where !state.reserved.contains(address) {
                if let owner = state.claimed[address], owner != holder { continue }
                state.claimed[address] = holder
                return address
            }
            return nil
        }
    }

    /// Gives up what `holder` claimed.
    func release(_ holder: ObjectIdentifier) {
        state.withLock { state in state.claimed = state.claimed.filter { $0.value != holder } }
    }
}
