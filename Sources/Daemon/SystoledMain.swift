import CMalloc
import Glibc
import MQTTBridge

/// What systoled does from its first instruction: `systoled`'s `main`, and `systole`'s when it is called by the name
/// `systoled` (the Debian package ships one binary for both, systoled a link to it).
public enum SystoledMain {
    /// Runs the daemon, or the MQTT client process when asked to be it; returns when the daemon stops.
    public static func run() async {
        // One malloc arena for every thread. glibc gives each thread that allocates its own arena, and the
        // daemon's few threads (the D-Bus loop, the concurrency pool, SQLite's writer queue) each kept a few MiB
        // of freed memory in theirs: about a quarter of its resident memory with a hundred sensors. At a few
        // hundred readings a second there is little contention for one.
        _ = mallopt(CMALLOC_ARENA_MAX, 1)
        // A write to a pipe or socket whose reader has gone is an error of that write (EPIPE), never the end of the
        // daemon: the MQTT client process, ended by a hostile broker's message, may go while a frame is on its way
        // to it, and the default action of SIGPIPE would take systoled with it.
        signal(SIGPIPE, SIG_IGN)
        // The MQTT client runs as a process of its own, started from this executable.
        MQTTClientChild.runIfAsked()
        await SystoledCommand.main(nil)
    }
}
