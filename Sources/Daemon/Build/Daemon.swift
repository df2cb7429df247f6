import ServiceLifecycle
import SystoledConfiguration

/// Why systoled could not start; the message says what to do.
public struct DaemonStartError: Error, CustomStringConvertible {
    public var description: String
    /// The exit status: 78 (EX_CONFIG) for a configuration mistake, which restarting will not fix.
    public var exitCode: Int32
}

/// The daemon, built and ready to run: every long-lived part is a service in one `ServiceGroup`.
public struct Daemon: Sendable {
    public let configuration: DaemonConfiguration
    public let group: ServiceGroup

    /// Runs until SIGTERM or SIGINT (graceful: the workout stays recoverable) or until a part fails.
    public func run() async throws { try await group.run() }
}
