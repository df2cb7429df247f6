import Glibc

/// A descriptor read on a connection's loop thread, set up with
/// ``DBusConnection/watch(_:onReadable:onReadComplete:onEnd:)``; pass it to ``DBusConnection/stopWatching(_:)`` to
/// end it.
public struct DBusDescriptorWatch: Sendable, Hashable {
    let id: UInt64
}

/// What a watch's reader did with what poll reported.
public struct DBusDescriptorReading: Sendable, Equatable {
    /// The read handed something on: the watch's `onReadComplete` runs at the end of this dispatch.
    public var delivered: Bool
    /// The descriptor is done: the watch ends (``DBusDescriptorEnd/byReader``) and the descriptor is closed.
    public var ended: Bool

    public init(delivered: Bool, ended: Bool = false) {
        self.delivered = delivered
        self.ended = ended
    }
}

/// Why a watch ended. The descriptor is closed in every case.
public enum DBusDescriptorEnd: Sendable, Equatable {
    /// Its reader said the descriptor was done (a hang-up, an error: the reader knows which).
    case byReader
    /// ``DBusConnection/stopWatching(_:)`` ended it.
    case stopped
    /// The connection closed (descriptors are closed before the connection leaves the bus).
    case connectionClosed
}

/// Reads a watched descriptor on the loop thread after poll reported it: `hungUp` when poll saw a hang-up or an
/// error. Read what is there without blocking, and at most a bounded amount, so one busy descriptor cannot starve
/// the bus or the others.
public typealias DBusDescriptorReader = @Sendable (_ fd: Int32, _ hungUp: Bool) -> DBusDescriptorReading

extension DBusConnection {
    /// Polls `fd` for input on the connection's loop thread beside the bus socket (one poll set, no thread of its
    /// own) and calls `onReadable` when there is some, in the same wakeups and dispatch as the bus's messages, as a
    /// SwiftNIO channel's reads share its event loop. `onReadComplete` runs once after a wakeup's reads that
    /// delivered something, when the wakeup's messages and descriptors are all dispatched (`channelReadComplete`).
    ///
    /// The watch owns `fd` from now on and closes it when it ends: when `onReadable` says so, on
    /// ``stopWatching(_:)``, or when the connection closes (before the connection leaves the bus). `onEnd` then runs
    /// once on the loop thread with the reason.
    public func watch(
        _ fd: Int32,
        onReadable: @escaping DBusDescriptorReader,
        onReadComplete: (@Sendable () -> Void)? = nil,
        onEnd: @escaping @Sendable (DBusDescriptorEnd) -> Void
    ) -> DBusDescriptorWatch {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let watch = DBusDescriptorWatch(id: state.nextCallID())
        let entry = LoopThread.Watched(
            id: watch.id,
            fd: fd,
            onReadable: onReadable,
            onReadComplete: onReadComplete,
            onEnd: onEnd
        )
        let loop = loop
        if !loop.enqueue({ loop.addWatched(entry) }) {
            Glibc.close(fd)
            onEnd(.connectionClosed)
        }
        return watch
    }

    /// Ends a watch: its descriptor is closed and its `onEnd` gets ``DBusDescriptorEnd/stopped`` (unless it had
    /// ended).
    public func stopWatching(_ watch: DBusDescriptorWatch) {
        let loop = loop
        loop.enqueue { loop.removeWatched(watch.id, .stopped) }
    }
}

extension LoopThread {
    /// A descriptor read on the loop thread.
    struct Watched {
        var id: UInt64
        var fd: Int32
        var onReadable: DBusDescriptorReader
        var onReadComplete: (@Sendable () -> Void)?
        var onEnd: @Sendable (DBusDescriptorEnd) -> Void
    }

    /// Loop thread: starts polling `entry`'s descriptor.
    func addWatched(_ entry: Watched) {
        assertOnLoopThread()
        watched.append(entry)
    }

    /// Loop thread: closes the descriptor of the watch `id` and tells its owner why, once.
    func removeWatched(_ id: UInt64, _ reason: DBusDescriptorEnd) {
        assertOnLoopThread()
        guard let index = watched.firstIndex(where: { $0.id == id }) else { return }
        let entry = watched.remove(at: index)
        close(entry.fd)
        entry.onEnd(reason)
    }

    /// Loop thread: ends every watch (the connection is closing).
    func removeAllWatched() {
        while let entry = watched.first { removeWatched(entry.id, .connectionClosed) }
    }

    /// Loop thread: lets `entry`'s reader read after poll reported `revents`, within a dispatch, so its
    /// end-of-dispatch actions run with the bus messages of the same wakeup.
    func readWatched(_ entry: Watched, revents: Int16) {
        let reading = entry.onReadable(entry.fd, revents & Int16(POLLHUP | POLLERR) != 0)
        if reading.delivered, let complete = entry.onReadComplete { readComplete(entry.id, complete) }
        if reading.ended { removeWatched(entry.id, .byReader) }
    }
}
