import CMalloc
import Daemon
import MQTTBridge

/// The daemon's entry point; everything else is in the Daemon module, which tests build too.
@main
enum Systoled {
    static func main() async {
        // One malloc arena for every thread. glibc gives each thread that allocates its own arena, and the
        // daemon's few threads (the D-Bus loop, the concurrency pool, SQLite's writer queue) each kept a few MiB
        // of freed memory in theirs: about a quarter of its resident memory with a hundred sensors. At a few
        // hundred readings a second there is little contention for one.
        _ = mallopt(CMALLOC_ARENA_MAX, 1)
        // The MQTT client runs as a process of its own, started from this executable.
        MQTTClientChild.runIfAsked()
        await SystoledCommand.main(nil)
    }
}
