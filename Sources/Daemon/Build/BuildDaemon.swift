import Foundation
import ServiceLifecycle
import SystoledConfiguration
import WorkoutKit

/// Builds systoled from its command-line arguments (without the program name), as `systoled` itself and the
/// tests do: reads the configuration, opens what it needs (``DaemonResources``), assembles the services on it
/// and takes the control API's name.
public func buildDaemon(
    _ arguments: [String],
    environment: [String: String] = ProcessInfo.processInfo.environment,
    clock: any WorkoutClock = SystemWorkoutClock()
) async throws(DaemonStartError) -> Daemon {
    let options: DaemonOptions
    do {
        options = try DaemonOptions.parse(arguments)
    } catch {
        throw DaemonStartError(description: DaemonOptions.fullMessage(for: error), exitCode: 64)
    }
    let configuration: DaemonConfiguration
    do {
        configuration = try options.configuration(environment: environment)
    } catch {
        throw DaemonStartError(description: "configuration error: \(error)", exitCode: 78)
    }
    let resources = try await DaemonResources.open(configuration, environment: environment)
    let services = try await resources.assembleServices(clock: clock, environment: environment)
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: resources.logger
        )
    )
    return Daemon(configuration: configuration, group: group)
}
