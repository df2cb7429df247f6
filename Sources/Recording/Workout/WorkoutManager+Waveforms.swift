import HeartRateSensors
import PolarMeasurementData
import WorkoutKit

extension WorkoutManager {
    /// A PMD frame as WorkoutKit takes it: a piece of waveform at the rate the sensor's clock measured, marked as
    /// following lost samples when the frame begins a new segment.
    package static func measurement(_ reading: PMDReading) -> SensorMeasurement {
        let kind: WaveformSample.Kind
        let channels: [[Int32]]
        switch reading.samples {
        case .ecg(let values):
            kind = .electrocardiogram
            channels = [values]
        case .acceleration(let values):
            kind = .acceleration
            channels = [values.map(\.x), values.map(\.y), values.map(\.z)]
        }
        return SensorMeasurement(
            date: reading.firstSampleDate,
            heartRate: nil,
            waveform: WaveformSample(
                kind: kind,
                start: reading.firstSampleDate,
                samplingFrequency: reading.rate,
                channels: channels,
                precededByGap: reading.segmentBreak != nil
            )
        )
    }

    package static func device(_ waveform: DaemonWaveform) -> Device {
        Device(
            name: waveform.name,
            address: waveform.reading.sensor.description,
            manufacturer: waveform.manufacturer,
            bodyLocation: waveform.bodyLocation
        )
    }
}
