import Foundation
import Glibc
import Testing

@testable import MQTTBridge

/// What systoled and its MQTT client process say to each other: every command and event comes back as it was
/// sent, through a real socket, and what a broken peer could send is refused with a reason.
@Suite struct ClientFramesTests {
    static let settings = ClientSettings(
        host: "broker.lan",
        port: 8883,
        clientID: "systoled",
        username: "ha",
        password: "pässword",
        usesTLS: true,
        caFile: "/etc/ssl/ca.pem",
        willTopic: "systole/status",
        willPayload: Array("offline".utf8)
    )
    static let message = MQTTMessage(topic: "systole/sensor/a0", payload: [0, 1, 255], qos: 1, retain: true)

    /// Writes `bytes` into a pipe and reads frames back until its end.
    func frames(_ bytes: [UInt8]) -> [FrameReader.Outcome] {
        // A socket pair, whose writer can be told not to raise SIGPIPE when the reader stops early.
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let writer = Thread { [end = ends[1]] in
            _ = bytes.withUnsafeBytes { send(end, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(end)
        }
        writer.start()
        defer { close(ends[0]) }
        var reader = FrameReader(descriptor: ends[0])
        var outcomes: [FrameReader.Outcome] = []
        while true {
            let outcome = reader.next()
            outcomes.append(outcome)
            if case .frame = outcome { continue }
            return outcomes
        }
    }

    @Test func commandsAndEventsComeBackAsSent() throws {
        let commands: [ClientFrames.Command] = [.start(Self.settings), .publish(Self.message), .stop]
        let events: [ClientFrames.Event] = [
            .started(false, "Lookup error."), .connection(true, "Connection Accepted."), .returned(Self.message),
            .refused("reading the MQTT CA file /etc/ca.pem: Invalid arguments provided."),
        ]
        var decodedCommands: [ClientFrames.Command] = []
        for case .frame(let kind, let body) in frames(commands.flatMap(ClientFrames.encode)) {
            decodedCommands.append(try ClientFrames.command(kind: kind, body: body))
        }
        #expect(decodedCommands == commands)
        var decodedEvents: [ClientFrames.Event] = []
        for case .frame(let kind, let body) in frames(events.flatMap(ClientFrames.encode)) {
            decodedEvents.append(try ClientFrames.event(kind: kind, body: body))
        }
        #expect(decodedEvents == events)
    }

    @Test func aFrameLongerThanTheLimitIsRefusedBeforeItIsGathered() {
        let huge = ClientFrames.frame(kind: 2, [UInt8](repeating: 7, count: ClientFrames.largestFrame))
        guard case .malformed(let reason) = frames(huge).first else {
            Issue.record("a frame of \(huge.count - 4) bytes was read")
            return
        }
        #expect(reason == "a frame of \(ClientFrames.largestFrame + 1) bytes")
        guard case .malformed = frames([0, 0, 0, 0]).first else {
            Issue.record("an empty frame was read")
            return
        }
    }

    @Test func malformedBodiesAreRefused() {
        #expect(throws: ClientFrames.Malformed.self) { try ClientFrames.command(kind: 1, body: Array("{".utf8)) }
        #expect(throws: ClientFrames.Malformed.self) { try ClientFrames.command(kind: 9, body: []) }
        // A topic said to be longer than the frame.
        #expect(throws: ClientFrames.Malformed.self) { try ClientFrames.command(kind: 2, body: [0, 0, 0, 9, 65]) }
        #expect(throws: ClientFrames.Malformed.self) { try ClientFrames.event(kind: 2, body: []) }
        #expect(throws: ClientFrames.Malformed.self) { try ClientFrames.event(kind: 1, body: [2]) }
    }

    @Test func aTruncatedFrameIsTheEnd() {
        let frame = ClientFrames.encode(.publish(Self.message))
        guard case .ended = frames(Array(frame.dropLast())).first else {
            Issue.record("a truncated frame was read")
            return
        }
    }
}
