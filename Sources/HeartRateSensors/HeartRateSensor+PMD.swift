import BlueZ
import HeartRateProfile
import PolarMeasurementData

extension BluetoothUUID {
    /// Polar's Measurement Data service (`fb005c80-02e7-f387-1cad-8acd2d8df0c8`).
    static let pmdService = BluetoothUUID(high: 0xFB00_5C80_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// Its control point (`fb005c81-…`).
    static let pmdControlPoint = BluetoothUUID(high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// Its data characteristic (`fb005c82-…`).
    static let pmdData = BluetoothUUID(high: 0xFB00_5C82_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
}

/// Polar's Measurement Data beside the heart rate: started while asked for (``measurePMD(_:)``), on each
/// connection, again after a reconnect, and stopped before the connection ends.
extension HeartRateSensor {
    /// Starts (true) or stops (false) the measurements ``Options/pmd`` names, on this connection and the next:
    /// the recording turns them on for a workout and off at its end. Without ``Options/pmd`` nothing happens.
    public func measurePMD(_ on: Bool) { pmdWanted.set(on) }

    /// Whether PMD measurements are asked for.
    public var measuresPMD: Bool { pmdWanted.value }

    /// Runs PMD on the connection to `device` while asked for, until the task is cancelled or the link goes.
    func runPMD(device: BluetoothDevice, address: BluetoothAddress) async {
        guard let pmd = options.pmdOverrides[address] ?? options.pmd, pmd.isEnabled else { return }
        while !Task.isCancelled, device.isConnected {
            await pmdWanted.wait(until: true)
            if Task.isCancelled { return }
            guard let controlPoint = device.characteristic(.pmdControlPoint, in: .pmdService),
                let data = device.characteristic(.pmdData, in: .pmdService)
            else {
                for type in [PMDMeasurementType.ecg, .acceleration]
                where type == .ecg ? pmd.ecg : pmd.accelerometer != nil {
                    emit(.pmd(.refused(type, reason: "\(address) has no Polar Measurement Data service")))
                }
                await pmdWanted.wait(until: false)
                continue
            }
            var pair: (@Sendable () async throws -> Void)?
            if let agent = options.agent {
                pair = { @Sendable () async throws -> Void in try await agent.pair(device) }
            }
            let session = PMDSession(
                controlPoint: controlPoint,
                data: data,
                address: address,
                options: pmd,
                answerTimeout: options.pmdAnswerTimeout,
                pair: pair,
                isConnected: { device.isConnected },
                report: { [weak self] event in self?.emit(event) },
                readComplete: readCompleteHandler()
            )
            await session.run(while: pmdWanted)
        }
    }
}
