#if canImport(Glibc)
import Glibc
#endif

/// Starts an OS thread that runs `main` and returns 0, or returns the error number (as `pthread_create` does)
/// when no thread could be started; `main` then never runs. Tests pass one that fails.
typealias ThreadSpawner = @Sendable (_ main: @escaping @Sendable () -> Void) -> Int32

/// The binding's ``ThreadSpawner``: a detached pthread, since nobody joins a loop thread (it ends on its own
/// once its connection has closed).
func spawnDetachedThread(_ main: @escaping @Sendable () -> Void) -> Int32 {
    let box = Unmanaged.passRetained(ThreadMain(main))
    var thread = pthread_t()
    let result = pthread_create(
        &thread,
        nil,
        { raw in
            Unmanaged<ThreadMain>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        },
        box.toOpaque()
    )
    if result == 0 {
        pthread_detach(thread)
    } else {
        box.release()
    }
    return result
}

/// What a new thread runs, passed through `pthread_create`'s context pointer.
private final class ThreadMain {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
