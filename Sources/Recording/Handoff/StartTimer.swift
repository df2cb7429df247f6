/// Starts a check that runs at `instant`, then at each instant it returns, until it returns nil; returns what
/// stops it. systoled runs its checks on the bus's loop thread (`DBusConnection.runOnLoop`), where a check costs
/// one wakeup.
package typealias StartTimer =
    @Sendable (
        _ instant: ContinuousClock.Instant, _ check: @escaping @Sendable () -> ContinuousClock.Instant?
    ) -> @Sendable () -> Void
