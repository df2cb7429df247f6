import Glibc

/// A socket read on a connection's loop thread, set up with
/// ``DBusConnection/readDatagrams(from:to:onEnd:)``; pass it to ``DBusConnection/closeDatagrams(_:)`` to end it.
public struct DBusDatagramSource: Sendable, Hashable {
    let id: UInt64
}

/// Why a datagram source ended. The socket is closed in every case.
public enum DBusDatagramEnd: Sendable, Equatable {
    /// The other end closed its socket (BlueZ does when the device disconnects or the session is released).
    case hungUp
    /// Reading the socket failed; the text is the system's.
    case failed(String)
    /// ``DBusConnection/closeDatagrams(_:)`` ended it.
    case closed
    /// The connection closed (the sockets are closed before the connection leaves the bus).
    case connectionClosed
}

extension DBusConnection {
    /// Reads each datagram of the `SOCK_SEQPACKET` or `SOCK_DGRAM` socket `fd` on the connection's loop thread,
    /// polled beside the bus socket (one poll set, no thread of its own), and hands it to `handler` as
    /// ``routeByteValue(of:interface:path:sender:to:)`` hands a routed value: the bytes (valid during the call) and
    /// when they were read. It is the other way BlueZ delivers notifications (`AcquireNotify`), so both reach one
    /// kind of handler, in the same wakeups, and `onReadComplete` runs as a route's does: once after a wakeup's last
    /// datagram, when the wakeup's messages and sockets are all dispatched.
    ///
    /// The source owns `fd` from now on and closes it when it ends: on a hang-up, on an error, on
    /// ``closeDatagrams(_:)``, or when the connection closes (before the connection leaves the bus). `onEnd` then
    /// runs once on the loop thread with the reason. A zero-length datagram is a datagram (given to `handler`
    /// empty), not the end; so is one longer than ``maximumDatagramLength``, given empty too, since no
    /// characteristic value is that long.
    public func readDatagrams(
        from fd: Int32,
        to handler: @escaping DBusByteValueHandler,
        onReadComplete: (@Sendable () -> Void)? = nil,
        onEnd: @escaping @Sendable (DBusDatagramEnd) -> Void
    ) -> DBusDatagramSource {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let source = DBusDatagramSource(id: state.nextCallID())
        let entry = LoopThread.Datagrams(
            id: source.id,
            fd: fd,
            handler: handler,
            onReadComplete: onReadComplete,
            onEnd: onEnd
        )
        let loop = loop
        if !loop.enqueue({ loop.addDatagrams(entry) }) {
            Glibc.close(fd)
            onEnd(.connectionClosed)
        }
        return source
    }

    /// Ends a source: its socket is closed and its `onEnd` gets ``DBusDatagramEnd/closed`` (unless it had ended).
    public func closeDatagrams(_ source: DBusDatagramSource) {
        let loop = loop
        loop.enqueue { loop.removeDatagrams(source.id, .closed) }
    }

    /// The longest datagram passed on as it is: an attribute value is at most 512 bytes (Bluetooth Core, Vol 3,
    /// Part F, 3.2.9), so anything longer is no notification.
    public static let maximumDatagramLength = 512
}

extension LoopThread {
    /// A socket read on the loop thread.
    struct Datagrams {
        var id: UInt64
        var fd: Int32
        var handler: DBusByteValueHandler
        var onReadComplete: (@Sendable () -> Void)?
        var onEnd: @Sendable (DBusDatagramEnd) -> Void
    }

    /// At most this many datagrams of one socket per wakeup, so a flooding socket cannot starve the bus or the
    /// other sockets; the rest wait in the socket for the next wakeup.
    static let datagramsPerWakeup = 64

    /// After a hang-up, this many zero-length reads in a row are the end of the socket.
    static let zeroReadsAtTheEnd = 8

    /// Loop thread: starts polling `entry`'s socket.
    func addDatagrams(_ entry: Datagrams) {
        assertOnLoopThread()
        datagramSources.append(entry)
    }

    /// Loop thread: closes the socket of the source `id` and tells its owner why, once.
    func removeDatagrams(_ id: UInt64, _ reason: DBusDatagramEnd) {
        assertOnLoopThread()
        guard let index = datagramSources.firstIndex(where: { $0.id == id }) else { return }
        let entry = datagramSources.remove(at: index)
        close(entry.fd)
        entry.onEnd(reason)
    }

    /// Loop thread: ends every source (the connection is closing).
    func removeAllDatagrams() {
        while let entry = datagramSources.first { removeDatagrams(entry.id, .connectionClosed) }
    }

    /// Loop thread: reads what `entry`'s socket holds after poll reported `revents` for it, within a dispatch, so
    /// handlers' end-of-dispatch actions run with the bus messages of the same wakeup.
    func readDatagrams(_ entry: Datagrams, revents: Int16) {
        let hungUp = revents & Int16(POLLHUP | POLLERR) != 0
        let buffer = datagramBuffer
        var ended: DBusDatagramEnd?
        var emptiesPending = 0
        var delivered = false
        reading: for _ in 0..<Self.datagramsPerWakeup {
            // MSG_TRUNC: the datagram's whole length, so an oversized one is recognised rather than cut.
            let count = recv(entry.fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC))
            if count < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK: break reading
                case EINTR: continue
                default:
                    ended = .failed(String(cString: strerror(errno)))
                    break reading
                }
            }
            if count == 0, hungUp || Self.hasHungUp(entry.fd) {
                // recv reads a zero-length datagram and the end alike. Before a hang-up a zero is a datagram; after
                // one it may be either, so what follows decides: a datagram with bytes means the zeros before it
                // were datagrams too, and zeros alone until the limit are the end (empty datagrams just before the
                // end, which carry nothing, go with it).
                emptiesPending += 1
                if emptiesPending >= Self.zeroReadsAtTheEnd {
                    ended = .hungUp
                    break reading
                }
                continue
            }
            for _ in 0..<emptiesPending { entry.handler(UnsafeRawBufferPointer(start: nil, count: 0), .now) }
            emptiesPending = 0
            delivered = true
            let bytes =
                count > DBusConnection.maximumDatagramLength
                ? UnsafeRawBufferPointer(start: nil, count: 0)
                : UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)
            entry.handler(bytes, .now)
        }
        if delivered, let complete = entry.onReadComplete { readComplete(entry.id, complete) }
        if let ended { removeDatagrams(entry.id, ended) }
    }

    private static func hasHungUp(_ fd: Int32) -> Bool {
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&probe, 1, 0) > 0 && probe.revents & Int16(POLLHUP | POLLERR) != 0
    }
}
