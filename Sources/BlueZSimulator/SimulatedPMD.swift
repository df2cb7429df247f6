import DBus
import Foundation
import PolarMeasurementData

/// The GATT objects of Polar's Measurement Data service on a simulated H10.
struct SimulatedPMDGatt: Sendable {
    let service: DBusObject
    let controlPoint: DBusObject
    let controlPointCCC: DBusObject
    let data: DBusObject
    let dataCCC: DBusObject

    var all: [DBusObject] { [service, controlPoint, controlPointCCC, data, dataCCC] }
}

/// Polar's PMD service as an H10 plays it (Polar's SDK and the notes in docs/simulator.md): the control point's
/// features read, commands answered by indication once the client has indications on the control point and
/// notifications on data (without both an H10 answers nothing), status codes for what it refuses, one streaming
/// client, frames sized by the MTU and stamped by the strap's clock.
extension BlueZSimulator {
    func readPMDFeatures(_ path: String) throws(DBusError) -> [UInt8] {
        let device = try pmdDevice(path)
        guard let spec = sensors[device.sensor].spec.pmd else { throw SimError.notSupported }
        let features = PMDFeatures((spec.ecg ? [.ecg] : []) + (spec.acc ? [.acceleration] : [])).encoded()
        device.gatt?.pmd?.controlPoint.setProperty(Self.characteristicInterface, "Value", .bytes(features))
        return features
    }

    func startPMDNotify(_ path: String, _ kind: Characteristic, client: String) throws(DBusError) {
        let device = try pmdDevice(path)
        let sessions = kind == .pmdControlPoint ? device.pmdControlSessions : device.pmdDataSessions
        guard !sessions.contains(client) else { return }
        if kind == .pmdControlPoint {
            devices[path]?.pmdControlSessions.insert(client)
        } else {
            devices[path]?.pmdDataSessions.insert(client)
        }
        if sessions.isEmpty {
            let object = kind == .pmdControlPoint ? device.gatt?.pmd?.controlPoint : device.gatt?.pmd?.data
            object?.setProperty(Self.characteristicInterface, "Notifying", .boolean(true))
        }
    }

    /// A write to the control point: acknowledged at once (the ATT write response), answered by an indication.
    func writePMDCommand(_ path: String, _ bytes: [UInt8]) throws(DBusError) {
        let device = try pmdDevice(path)
        // Without indications and notifications both on, the strap takes the write and answers nothing.
        guard !device.pmdControlSessions.isEmpty, !device.pmdDataSessions.isEmpty else { return }
        let answer = pmdAnswer(path, to: bytes)
        let weakSelf = WeakSimulator(self)
        Task { await weakSelf.value?.indicate(answer, on: path) }
    }

    private func indicate(_ answer: [UInt8], on path: String) {
        guard let device = devices[path], device.connected, !device.pmdControlSessions.isEmpty,
            let controlPoint = device.gatt?.pmd?.controlPoint
        else { return }
        controlPoint.setProperties(Self.characteristicInterface, ["Value": .bytes(answer)], emitUnchanged: true)
    }

    private func pmdAnswer(_ path: String, to bytes: [UInt8]) -> [UInt8] {
        guard let device = devices[path], let spec = sensors[device.sensor].spec.pmd, let opcode = bytes.first else {
            return PMDResponse(
                opcode: .init(rawValue: 0),
                type: .ecg,
                status: .invalidLength,
                more: false,
                parameters: []
            )
            .encoded()
        }
        let type = PMDMeasurementType(rawValue: bytes.count > 1 ? bytes[1] : 0)
        func answer(_ status: PMDStatus, _ parameters: [UInt8] = []) -> [UInt8] {
            PMDResponse(
                opcode: .init(rawValue: opcode),
                type: type,
                status: status,
                more: false,
                parameters: parameters
            )
            .encoded()
        }
        let offered = (type == .ecg && spec.ecg) || (type == .acceleration && spec.acc)
        switch PMDOpcode(rawValue: opcode) {
        case .getSettings:
            guard bytes.count == 2 else { return answer(.invalidLength) }
            guard offered else { return answer(.notSupported) }
            let settings =
                type == .ecg
                ? PMDSettings([.sampleRate: [130], .resolution: [14]])
                : PMDSettings([.sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8]])
            return answer(.success, settings.encoded())
        case .start:
            guard bytes.count >= 2 else { return answer(.invalidLength) }
            guard offered else { return answer(.notSupported) }
            guard let settings = try? PMDSettings(decoding: Array(bytes.dropFirst(2))) else {
                return answer(.invalidParameter)
            }
            return startPMD(path, type, settings, spec: spec, answer: answer)
        case .stop:
            guard bytes.count == 2 else { return answer(.invalidLength) }
            guard devices[path]?.pmdStreams.removeValue(forKey: type.rawValue) != nil else {
                return answer(.alreadyInState)
            }
            return answer(.success)
        case .getStatus:
            let running = PMDFeatures(device.pmdStreams.keys.map(PMDMeasurementType.init(rawValue:)))
            return answer(.success, Array(running.encoded().dropFirst()))
        default:
            return answer(.invalidOpcode)
        }
    }

    private func startPMD(
        _ path: String,
        _ type: PMDMeasurementType,
        _ settings: PMDSettings,
        spec: PMDSpec,
        answer: (PMDStatus, [UInt8]) -> [UInt8]
    ) -> [UInt8] {
        guard let device = devices[path] else { return answer(.invalidState, []) }
        guard device.pmdStreams[type.rawValue] == nil else { return answer(.alreadyInState, []) }
        var rate = spec.rate
        if type == .ecg {
            if let refusal = spec.refuseECG { return answer(PMDStatus(rawValue: refusal), []) }
            guard settings[.sampleRate] == 130 else { return answer(.invalidSampleRate, []) }
            guard settings[.resolution] == 14 else { return answer(.invalidResolution, []) }
        } else {
            guard let asked = settings[.sampleRate], [25, 50, 100, 200].contains(asked) else {
                return answer(.invalidSampleRate, [])
            }
            guard settings[.resolution] == 16 else { return answer(.invalidResolution, []) }
            guard let range = settings[.range], [2, 4, 8].contains(range) else { return answer(.invalidRange, []) }
            rate = Double(asked) * spec.rate / 130
        }
        let sensor = sensors[device.sensor]
        devices[path]?.pmdStreams[type.rawValue] = PolarStream(
            type: type,
            startedAt: now,
            rate: rate,
            mtu: sensor.spec.effectiveMTU,
            spec: spec,
            clock: sensor.clock,
            recorded: sensor.recordedECG,
            seed: scenario.seed ^ UInt64(sensor.index) ^ 0xEC6
        )
        // The start answer carries the factor compressed samples are scaled by; raw ones need none.
        return answer(.success, type == .acceleration ? PMDSettings([.factor: [Float(1).bitPattern]]).rawFactor : [])
    }

    /// How many PMD measurements sensor `index` is streaming (tests).
    public func pmdStreamsRunning(sensor index: Int) -> Int {
        devices.values.filter { $0.sensor == index && $0.connected }.map(\.pmdStreams.count).reduce(0, +)
    }

    private func pmdDevice(_ path: String) throws(DBusError) -> SimulatedDevice {
        let device = try connectedDevice(path)
        if sensors[device.sensor].spec.pmd?.requiresPairing == true, !device.paired {
            // Insufficient Authentication, as BlueZ reports it.
            throw SimError.make("NotPermitted", "Not paired")
        }
        return device
    }

    /// Sends sensor `index`'s PMD frames as they fall due.
    func runPMD(_ index: Int) async {
        while !Task.isCancelled {
            guard let due = nextPMDFrame(index) else {
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            try? await Task.sleep(until: start + .seconds(due), tolerance: .milliseconds(5), clock: .continuous)
            if Task.isCancelled { return }
            pmdTick(index, at: now)
        }
    }

    private func nextPMDFrame(_ index: Int) -> Double? {
        guard let path = sensors[index].connectedVia, let device = devices[path] else { return nil }
        return device.pmdStreams.values.compactMap(\.nextFrameDue).min()
    }

    private func pmdTick(_ index: Int, at time: Double) {
        guard isRunning, let path = sensors[index].connectedVia, let device = devices[path], !device.disconnecting,
            let data = device.gatt?.pmd?.data
        else { return }
        // The ECG around a sample needs the beats up to a second after it.
        sensors[index].behaviour.advanceHeart(through: time + 1.5)
        let peaks = sensors[index].behaviour.rPeaks
        for key in device.pmdStreams.keys.sorted() {
            guard var stream = devices[path]?.pmdStreams[key] else { continue }
            let payloads = stream.frames(until: time, rPeaks: peaks)
            devices[path]?.pmdStreams[key] = stream
            // Frames nobody listens to are lost in the air, as the strap's are when notifications are off.
            guard !device.pmdDataSessions.isEmpty else { continue }
            for payload in payloads {
                data.setProperties(Self.characteristicInterface, ["Value": .bytes(payload)], emitUnchanged: true)
                let entry = EmittedNotification(
                    date: Date(),
                    sensor: sensors[index].address,
                    payload: payload,
                    malformed: false,
                    sensorIndex: index,
                    characteristic: .pmdData
                )
                emitLog?.record(entry)
                if recordsEmissions { emitted.append(entry) }
            }
        }
    }
}

extension PMDSettings {
    /// The factor setting alone, as a start answer carries it.
    fileprivate var rawFactor: [UInt8] {
        guard let bits = self[.factor] else { return [] }
        return [Kind.factor.rawValue, 1] + (0..<4).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt32($0))) }
    }
}
