import BlueZ
import Foundation
import PolarMeasurementData
import Synchronization

/// Polar's Measurement Data on one connection of a sensor, beside its Heart Rate notifications: indications on the
/// control point and notifications on data (a Polar strap answers nothing without both), what the sensor can
/// measure, the starts, the frames as they arrive, and the stops, sent before the sessions end.
///
/// Nothing here can stop the heart rate: a refusal, a timeout or a broken frame is an event, and the sensor goes on.
final class PMDSession: Sendable {
    let controlPoint: GattCharacteristic
    let data: GattCharacteristic
    let address: BluetoothAddress
    let options: PMDOptions
    /// How long the sensor may take to answer a command.
    let answerTimeout: Duration
    let report: @Sendable (HeartRateSensorEvent) -> Void
    let readComplete: @Sendable () -> Void
    /// Pairs the device when the sensor wants it for PMD (nil: no agent to pair with).
    let pair: (@Sendable () async throws -> Void)?
    /// Whether the device is still connected (a cancelled connection may have ended with the link).
    let isConnected: @Sendable () -> Bool
    let answers = PMDAnswers()
    let frames: Mutex<PMDFrameState>

    init(
        controlPoint: GattCharacteristic,
        data: GattCharacteristic,
        address: BluetoothAddress,
        options: PMDOptions,
        answerTimeout: Duration = .seconds(5),
        pair: (@Sendable () async throws -> Void)?,
        isConnected: @escaping @Sendable () -> Bool,
        report: @escaping @Sendable (HeartRateSensorEvent) -> Void,
        readComplete: @escaping @Sendable () -> Void
    ) {
        self.controlPoint = controlPoint
        self.data = data
        self.address = address
        self.options = options
        self.answerTimeout = answerTimeout
        self.pair = pair
        self.isConnected = isConnected
        self.report = report
        self.readComplete = readComplete
        frames = Mutex(PMDFrameState())
    }

    private var wanted: [PMDMeasurementType] {
        (options.ecg ? [.ecg] : []) + (options.accelerometer != nil ? [.acceleration] : [])
    }

    /// Measures while `wanted` is on, the link stays up and the task is not cancelled; then stops what it started.
    func run(while wanted: WaitableSwitch) async {
        let sessions: [GattNotifySession]
        do {
            sessions = try await openWithPairing()
        } catch {
            for type in self.wanted { report(.pmd(.refused(type, reason: "PMD is not available: \(error)"))) }
            await wanted.wait(until: false)
            return
        }
        let linkGone = WaitableSwitch()
        let watchers = sessions.map { session in
            Task {
                try? await session.ended()
                linkGone.set(true)
            }
        }
        let started = await startMeasurements()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await wanted.wait(until: false) }
            group.addTask { await linkGone.wait(until: true) }
            await group.next()
            group.cancelAll()
        }
        let reason: String
        if linkGone.value || !isConnected() {
            reason = "the link went"
        } else {
            reason = wanted.value ? "the sensor is stopping" : "no longer asked for"
            // Sent even when the task was cancelled (systoled stopping): a strap left streaming takes a while to
            // start again.
            await Task.detached { await self.stop(started) }.value
        }
        frames.withLock { $0.started = [:] }
        // Notifications stopped, and bluetoothd's answers awaited, before the next session may start: a StopNotify
        // arriving after the next StartNotify would silence that session.
        if !linkGone.value { await Task.detached { for session in sessions { await session.stop() } }.value }
        for watcher in watchers { watcher.cancel() }
        for type in started { report(.pmd(.stopped(type, reason: reason))) }
    }

    /// Indications on the control point, then notifications on data; paired first when the sensor asks for it.
    private func openWithPairing() async throws -> [GattNotifySession] {
        do {
            return try await open()
        } catch  where [.notPermitted, .notAuthorized].contains(error.kind) {
            guard let pair else { throw error }
            try await pair()
            return try await open()
        }
    }

    private func open() async throws(BlueZError) -> [GattNotifySession] {
        let controlSession = try await controlPoint.notifications(onValue: { [weak self] notification in
            self?.handleIndication(notification)
        })
        // A failure here drops the control point's session with it (its stream ends, StopNotify is sent).
        let dataSession = try await data.notifications(
            onValue: { [weak self] notification in self?.handle(notification) },
            onReadComplete: readComplete
        )
        return [controlSession, dataSession]
    }

    /// Reads what the sensor can measure and starts what was asked for; returns what started.
    private func startMeasurements() async -> [PMDMeasurementType] {
        let features: PMDFeatures
        do {
            features = try PMDFeatures(decoding: try await controlPoint.readValue())
        } catch {
            for type in wanted { report(.pmd(.refused(type, reason: "reading what the sensor measures: \(error)"))) }
            return []
        }
        var started: [PMDMeasurementType] = []
        for type in wanted {
            guard features.offers(type) else {
                report(.pmd(.refused(type, reason: "the sensor offers no \(type)")))
                continue
            }
            let command: PMDCommand =
                type == .ecg
                ? .startH10ECG
                : .startAcceleration(rate: options.accelerometer?.rate ?? 50, range: options.accelerometer?.range ?? 8)
            if await start(command, type) { started.append(type) }
        }
        return started
    }

    private func start(_ command: PMDCommand, _ type: PMDMeasurementType) async -> Bool {
        var answer = await send(command, type)
        if case .success(let response) = answer, response.status == .alreadyInState {
            // Still streaming from an earlier connection (or an earlier systoled): stop it, start it as asked.
            _ = await send(.stop(type), type)
            answer = await send(command, type)
        }
        switch answer {
        case .success(let response) where response.status == .success:
            let factor = (try? PMDSettings(decoding: response.parameters))?.factor ?? 1
            let rate = Double(type == .ecg ? 130 : options.accelerometer?.rate ?? 50)
            frames.withLock { state in
                state.started[type.rawValue] = factor.isFinite && factor != 0 ? factor : 1
                state.timelines[type.rawValue] = PMDTimeline(
                    nominalRate: rate,
                    plausibleRates: (rate * 0.9)...(rate * 1.1)
                )
            }
            report(.pmd(.started(type)))
            return true
        case .success(let response):
            report(.pmd(.refused(type, reason: explain(response.status))))
        case .failure(let failure):
            report(.pmd(.refused(type, reason: failure.reason)))
        }
        return false
    }

    /// Stops `types`, waiting a moment for each answer (a strap gone quiet must not hold systoled up).
    private func stop(_ types: [PMDMeasurementType]) async {
        for type in types { _ = await send(.stop(type), type, timeout: .seconds(1)) }
    }

    /// Writes `command` and waits for its answer; a measurement the sensor stopped on its own is reported.
    private func send(
        _ command: PMDCommand,
        _ type: PMDMeasurementType,
        timeout: Duration? = nil
    ) async -> Result<PMDResponse, PMDCommandFailure> {
        do {
            try await controlPoint.writeValue(command.encoded())
        } catch {
            return .failure(PMDCommandFailure(reason: "writing \(command.opcode) to the control point: \(error)"))
        }
        let deadline = ContinuousClock.now + (timeout ?? answerTimeout)
        while case let left = deadline - .now, left > .zero {
            switch await answers.take(timeout: left) {
            case .response(let response)? where response.opcode == command.opcode && response.type == type:
                return .success(response)
            case .measurementStopped(let types)?:
                for stopped in types { report(.pmd(.stopped(stopped, reason: "the sensor stopped it"))) }
            case .response?:
                continue
            case nil:
                break
            }
        }
        return .failure(
            PMDCommandFailure(
                reason: "the sensor did not answer \(command.opcode) \(type) within \(timeout ?? answerTimeout)"
            )
        )
    }

    /// The status of a refused start, as the person holding the strap can act on it.
    private func explain(_ status: PMDStatus) -> String {
        switch status {
        case .invalidMTU:
            let mtu = controlPoint.mtu.map { "\($0) bytes" } ?? "unknown"
            return "invalid MTU: the link's MTU is \(mtu), the strap needs \(PMDService.preferredMTU)"
        case .deviceInCharger: return "the strap is in its charger"
        default: return "the sensor answered: \(status)"
        }
    }
}

/// Why a command got no answer.
struct PMDCommandFailure: Error {
    var reason: String
}
