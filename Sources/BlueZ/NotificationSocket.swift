import DBus
import Glibc

/// The socket AcquireNotify hands over, read on the bus connection's loop thread (a ``DBus/DBusConnection`` watch):
/// each datagram is one notification, handed on as ``GattCharacteristic/routeValues(of:on:to:onReadComplete:)``
/// hands a signal's value, so both paths reach one kind of handler in the same wakeups.
///
/// A zero-length datagram is a notification (handed on empty), not the end; so is one longer than
/// ``maximumValueLength``, handed on empty too, since no characteristic value is that long.
enum NotificationSocket {
    /// Why a socket ended. It is closed in every case.
    enum End: Sendable, Equatable {
        /// The other end closed its socket (BlueZ does when the device disconnects or the session is released).
        case hungUp
        /// Reading the socket failed; the text is the system's.
        case failed(String)
        /// ``close(_:on:)`` ended it.
        case closed
        /// The bus connection closed.
        case connectionClosed
    }

    /// The longest value passed on as it is: an attribute value is at most 512 bytes (Bluetooth Core, Vol 3, Part
    /// F, 3.2.9), so anything longer is no notification.
    static let maximumValueLength = 512

    /// At most this many datagrams of one socket per wakeup, so a flooding socket cannot starve the bus or the
    /// other sockets; the rest wait in the socket for the next wakeup.
    static let datagramsPerWakeup = 64

    /// After a hang-up, this many zero-length reads in a row are the end of the socket.
    static let zeroReadsAtTheEnd = 8

    /// Reads each datagram of `fd` (`SOCK_SEQPACKET`) on `connection`'s loop thread and hands it to `handler`: the
    /// bytes (valid during the call) and when they were read; `onReadComplete` once after each read's last. The
    /// socket belongs to the returned watch from now on; `onEnd` runs once, on the loop thread, when it ends.
    static func read(
        _ fd: Int32,
        on connection: DBusConnection,
        to handler: @escaping @Sendable (UnsafeRawBufferPointer, ContinuousClock.Instant) -> Void,
        onReadComplete: (@Sendable () -> Void)? = nil,
        onEnd: @escaping @Sendable (End) -> Void
    ) -> DBusDescriptorWatch {
        let reader = Reader(handler: handler)
        return connection.watch(fd, onReadable: reader.read, onReadComplete: onReadComplete) { end in
            switch end {
            case .byReader: onEnd(reader.end ?? .hungUp)
            case .stopped: onEnd(.closed)
            case .connectionClosed: onEnd(.connectionClosed)
            }
            reader.release()
        }
    }

    /// Ends reading `watch`: its socket is closed, which is how bluetoothd learns the session is released.
    static func close(_ watch: DBusDescriptorWatch, on connection: DBusConnection) {
        connection.stopWatching(watch)
    }

    /// One socket's reading state. Used on the loop thread only (its reads and its end), hence unchecked.
    final class Reader: @unchecked Sendable {
        private let handler: @Sendable (UnsafeRawBufferPointer, ContinuousClock.Instant) -> Void
        /// Longer than any value passed on, so that a longer datagram is seen whole in length.
        private var buffer: UnsafeMutableRawBufferPointer? = .allocate(
            byteCount: NotificationSocket.maximumValueLength * 2,
            alignment: 8
        )
        private(set) var end: End?

        init(handler: @escaping @Sendable (UnsafeRawBufferPointer, ContinuousClock.Instant) -> Void) {
            self.handler = handler
        }

        deinit { buffer?.deallocate() }

        func release() {
            buffer?.deallocate()
            buffer = nil
        }

        func read(_ fd: Int32, hungUp: Bool) -> DBusDescriptorReading {
            guard let buffer else { return DBusDescriptorReading(delivered: false, ended: true) }
            var emptiesPending = 0
            var delivered = false
            reading: for _ in 0..<NotificationSocket.datagramsPerWakeup {
                // MSG_TRUNC: the datagram's whole length, so an oversized one is recognised rather than cut.
                let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC))
                if count < 0 {
                    switch errno {
                    case EAGAIN, EWOULDBLOCK: break reading
                    case EINTR: continue
                    default:
                        end = .failed(String(cString: strerror(errno)))
                        break reading
                    }
                }
                if count == 0, hungUp || Self.hasHungUp(fd) {
                    // recv reads a zero-length datagram and the end alike. Before a hang-up a zero is a datagram;
                    // after one it may be either, so what follows decides: a datagram with bytes means the zeros
                    // before it were datagrams too, and zeros alone until the limit are the end (empty datagrams
                    // just before the end, which carry nothing, go with it).
                    emptiesPending += 1
                    if emptiesPending >= NotificationSocket.zeroReadsAtTheEnd {
                        end = .hungUp
                        break reading
                    }
                    continue
                }
                for _ in 0..<emptiesPending { handler(UnsafeRawBufferPointer(start: nil, count: 0), .now) }
                emptiesPending = 0
                delivered = true
                let bytes =
                    count > NotificationSocket.maximumValueLength
                    ? UnsafeRawBufferPointer(start: nil, count: 0)
                    : UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)
                handler(bytes, .now)
            }
            return DBusDescriptorReading(delivered: delivered, ended: end != nil)
        }

        private static func hasHungUp(_ fd: Int32) -> Bool {
            var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return Glibc.poll(&probe, 1, 0) > 0 && probe.revents & Int16(POLLHUP | POLLERR) != 0
        }
    }
}
