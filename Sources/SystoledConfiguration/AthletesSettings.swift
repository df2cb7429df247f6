import BlueZ
import Recording
import SafeText

extension DaemonConfiguration {
    /// Who wears which sensor (`[athletes]`): see ``Recording/Athletes``.
    public typealias Athletes = Recording.Athletes

    /// An `[athletes]` entry: a sensor's address in quotes, then the athlete's name.
    mutating func applyAthlete(_ entry: TOML.Entry) throws(Reason) {
        let address: BluetoothAddress
        do {
            address = try BluetoothAddress(entry.key)
        } catch {
            throw Reason(
                "\(entry.key.quotedExcerpt()) in [athletes] is not a sensor address; write "
                    + "\"A0:9E:1A:12:34:56\" = \"Ana\" (find addresses with 'systole scan')"
            )
        }
        guard case .string(let text) = entry.value else {
            throw Reason("the athlete for \(address) must be a name in quotes, not \(entry.value.kind)")
        }
        guard let name = Athletes.checkedName(text) else {
            throw Reason(
                "the athlete for \(address) must be 1 to \(Athletes.maximumNameLength) letters, digits, spaces or "
                    + ". - _ ' (no space first or last), not \(text.quotedExcerpt())"
            )
        }
        guard athletes.byAddress[address.description] == nil else {
            throw Reason("\(address) is named twice in [athletes]; give each sensor one athlete")
        }
        guard athletes.byAddress.count < DaemonConfiguration.maximumSensors else {
            throw Reason("[athletes] names more than \(DaemonConfiguration.maximumSensors) sensors")
        }
        athletes.add(address: address, name: name)
    }
}
