import HeartRateSensors
import PolarMeasurementData

extension SensorStatus {
    /// Keeps ``ecg`` as the sensor's PMD events tell it (the accelerometer's events go to the log alone).
    mutating func apply(_ event: PMDEvent) {
        switch event {
        case .started(.ecg): ecg = "streaming"
        case .refused(.ecg, let reason): ecg = "refused: \(reason)"
        case .stopped(.ecg, let reason): ecg = "stopped: \(reason)"
        default: break
        }
    }
}
