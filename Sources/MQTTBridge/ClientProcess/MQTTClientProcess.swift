import Foundation
import Synchronization

/// systoled's side of one MQTT client process (``MQTTClientChild``): starts it, hands it messages and hears what
/// became of the connection. One instance is one process; when it ends, ``MQTTPublisher`` starts another.
final class MQTTClientProcess: @unchecked Sendable {
    enum Event: Sendable {
        case connection(connected: Bool, reason: String)
        /// A message the child could not hand to libmosquitto: it goes back in the queue.
        case returned(MQTTMessage)
        /// The process ended (it was not stopped); why, as said to the user.
        case ended(String)
    }

    /// How long a message may wait for room in the pipe before the child is taken as hung (and killed).
    static let writeDeadline: Duration = .seconds(2)
    /// How long the child may take to resolve the broker's name and start connecting.
    static let startDeadline: Duration = .seconds(60)

    private let executable: String
    private let onEvent: @Sendable (Event) -> Void
    private let state = Mutex(State())
    /// Serializes whole frames on the command pipe.
    private let writing = Mutex(())

    private struct State {
        var pid: pid_t = 0
        var commands: Int32 = -1
        var connected = false
        var stopping = false
        var startReply: CheckedContinuation<StartOutcome, Never>?
    }

    /// `executable` must call ``MQTTClientChild/runIfAsked()`` first thing: systoled's own, by default.
    init(executable: String = "/proc/self/exe", onEvent: @escaping @Sendable (Event) -> Void) {
        self.executable = executable
        self.onEvent = onEvent
    }

    /// How a start went.
    enum StartOutcome: Equatable {
        /// The first connection attempt is under way.
        case started
        /// Not now (the broker refused, its name did not resolve): worth trying again later.
        case failed(String)
        /// libmosquitto refused a setting: no attempt can succeed until the configuration changes.
        case refused(String)
    }

    /// Starts the process and its first connection attempt. Unless it started, the process has ended, and no
    /// ``Event/ended(_:)`` follows.
    func start(_ settings: ClientSettings) async -> StartOutcome {
        let events: Int32
        do {
            events = try spawn()
        } catch {
            return .failed("cannot start the MQTT client process: \(error)")
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (reply: CheckedContinuation<StartOutcome, Never>) in
                state.withLock { $0.startReply = reply }
                let reader = Thread { [self] in listen(events) }
                reader.start()
                if !send(.start(settings)) { kill() }
                // A name that takes a minute to resolve is as good as none.
                Task { [self] in
                    try? await Task.sleep(for: Self.startDeadline)
                    if state.withLock({ $0.startReply != nil }) { kill() }
                }
            }
        } onCancel: {
            kill()
        }
    }

    /// Hands `message` to the client; false when it is not connected (then it was not taken).
    func publish(_ message: MQTTMessage) -> Bool {
        // MQTT's topics are at most 65 535 bytes; ours are far shorter.
        guard message.topic.utf8.count <= Int(UInt16.max), state.withLock({ $0.connected }) else { return false }
        return send(.publish(message))
    }

    /// Says goodbye (what was published goes out first) and waits for the process to end, at most ten seconds.
    func stop() async {
        state.withLock { $0.stopping = true }
        _ = send(.stop)
        var waited = Duration.zero
        while state.withLock({ $0.pid != 0 }), waited < .seconds(10) {
            try? await Task.sleep(for: .milliseconds(50))
            waited += .milliseconds(50)
        }
        kill()
    }

    private func kill() {
        let pid = state.withLock { $0.pid }
        if pid != 0 { _ = Glibc.kill(pid, SIGKILL) }
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the child with a command pipe on its stdin and an event pipe on its stdout; returns the event pipe.
    private func spawn() throws(SpawnFailure) -> Int32 {
        var commandPipe: [Int32] = [-1, -1]
        var eventPipe: [Int32] = [-1, -1]
        guard pipe(&commandPipe) == 0 else { throw SpawnFailure(description: String(cString: strerror(errno))) }
        guard pipe(&eventPipe) == 0 else {
            close(commandPipe[0])
            close(commandPipe[1])
            throw SpawnFailure(description: String(cString: strerror(errno)))
        }
        // Only the child's stdin and stdout are its ends (dup2 leaves them open there).
        for descriptor in commandPipe + eventPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, commandPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, eventPipe[1], 1)
        var pid: pid_t = 0
        let arguments = [executable, MQTTClientChild.argument]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(commandPipe[0])
        close(eventPipe[1])
        guard result == 0 else {
            close(commandPipe[1])
            close(eventPipe[0])
            throw SpawnFailure(description: String(cString: strerror(result)))
        }
        // Never blocks systoled: a full pipe is waited on with a deadline (``send(_:)``).
        _ = fcntl(commandPipe[1], F_SETFL, fcntl(commandPipe[1], F_GETFL) | O_NONBLOCK)
        state.withLock {
            $0.pid = pid
            $0.commands = commandPipe[1]
        }
        return eventPipe[0]
    }

    /// Writes one frame whole; false (and the child killed) when it would not take it within ``writeDeadline``.
    private func send(_ command: ClientFrames.Command) -> Bool {
        let frame = ClientFrames.encode(command)
        guard frame.count <= ClientFrames.largestFrame + 4 else { return false }
        let sent = writing.withLock { _ -> Bool in
            let descriptor = state.withLock { $0.commands }
            guard descriptor >= 0 else { return false }
            let deadline = ContinuousClock.now + Self.writeDeadline
            var offset = 0
            while offset < frame.count {
                let written = frame[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written > 0 {
                    offset += written
                    continue
                }
                guard written < 0, errno == EAGAIN || errno == EINTR else { return false }
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, Int32(left.components.seconds * 1000 + 1))
            }
            return true
        }
        if !sent { kill() }
        return sent
    }

    /// The child's events until its stdout closes; then reaps it and tells how it ended.
    private func listen(_ descriptor: Int32) {
        var reader = FrameReader(descriptor: descriptor)
        loop: while true {
            switch reader.next() {
            case .frame(let kind, let body):
                guard let event = try? ClientFrames.event(kind: kind, body: body) else {
                    kill()
                    break loop
                }
                deliver(event)
            case .ended:
                break loop
            case .malformed:
                kill()
                break loop
            }
        }
        close(descriptor)
        let (pid, commands) = state.withLock { ($0.pid, $0.commands) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        writing.withLock { _ in
            close(commands)
            state.withLock {
                $0.pid = 0
                $0.commands = -1
            }
        }
        let (reply, stopping) = state.withLock { state in
            defer {
                state.startReply = nil
                state.connected = false
            }
            return (state.startReply, state.stopping)
        }
        let how = Self.describe(status)
        if let reply {
            reply.resume(returning: .failed("the MQTT client process \(how) before it started connecting"))
        } else if !stopping {
            onEvent(.ended("the MQTT client process \(how)"))
        }
    }

    private func deliver(_ event: ClientFrames.Event) {
        switch event {
        case .started(let ok, let reason):
            let reply = state.withLock { state in
                defer { state.startReply = nil }
                // The child exits after a failed start; that end is this answer, not an event.
                if !ok { state.stopping = true }
                return state.startReply
            }
            reply?.resume(returning: ok ? .started : .failed(reason))
        case .connection(let connected, let reason):
            state.withLock { $0.connected = connected }
            onEvent(.connection(connected: connected, reason: reason))
        case .returned(let message):
            onEvent(.returned(message))
        case .refused(let reason):
            let reply = state.withLock { state in
                defer { state.startReply = nil }
                state.stopping = true
                return state.startReply
            }
            reply?.resume(returning: .refused(reason))
        }
    }

    private static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        if signal == 0 {
            let code = (status >> 8) & 0xFF
            // It told why before it exited.
            if code == MQTTClientChild.Status.loopEnded.rawValue { return "ended after the error above" }
            return "exited with status \(code)"
        }
        return "was killed by signal \(signal)\(signal == SIGKILL ? " (SIGKILL)" : "")"
    }
}
