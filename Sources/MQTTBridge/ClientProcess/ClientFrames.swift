import Foundation

/// What systoled and its MQTT client process (``MQTTClientChild``) say to each other over two pipes: frames of a
/// 4-byte big-endian length, a kind byte and a body. The child's frames are read with a bound, so a broken child
/// cannot make systoled hold more than ``ClientFrames/largestFrame``.
enum ClientFrames {
    /// The largest frame either side accepts: a message to publish (the largest is a discovery config, well under
    /// 4 KiB) or a reason libmosquitto gave.
    static let largestFrame = 64 * 1024

    /// systoled to the child.
    enum Command: Equatable {
        /// The first frame: everything the child needs to connect.
        case start(ClientSettings)
        case publish(MQTTMessage)
        /// Say goodbye (what was published before goes out first) and exit.
        case stop
    }

    /// The child to systoled.
    enum Event: Equatable {
        /// The first attempt got under way (true), or failed at once with the reason (then the child exits).
        case started(Bool, String)
        /// libmosquitto's connection changes, as ``MosquittoClient/ConnectionChange``.
        case connection(Bool, String)
        /// A message libmosquitto did not take (the connection had just gone): systoled queues it again.
        case returned(MQTTMessage)
        /// libmosquitto refused a setting (an unreadable CA file): no attempt can succeed; the child exits.
        case refused(String)
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func frame(kind: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(body.count + 1)
        return withUnsafeBytes(of: length.bigEndian) { Array($0) } + [kind] + body
    }

    static func encode(_ command: Command) -> [UInt8] {
        switch command {
        case .start(let settings):
            // JSONEncoder cannot fail on these plain values.
            return frame(kind: 1, Array((try? JSONEncoder().encode(settings)) ?? Data()))
        case .publish(let message): return frame(kind: 2, encode(message))
        case .stop: return frame(kind: 3, [])
        }
    }

    static func encode(_ event: Event) -> [UInt8] {
        switch event {
        case .started(let ok, let reason): return frame(kind: 1, [ok ? 1 : 0] + Array(reason.utf8))
        case .connection(let up, let reason): return frame(kind: 2, [up ? 1 : 0] + Array(reason.utf8))
        case .returned(let message): return frame(kind: 3, encode(message))
        case .refused(let reason): return frame(kind: 4, Array(reason.utf8))
        }
    }

    static func command(kind: UInt8, body: [UInt8]) throws(Malformed) -> Command {
        switch kind {
        case 1:
            guard let settings = try? JSONDecoder().decode(ClientSettings.self, from: Data(body)) else {
                throw Malformed(description: "unreadable settings")
            }
            return .start(settings)
        case 2: return .publish(try message(body))
        case 3: return .stop
        default: throw Malformed(description: "unknown command \(kind)")
        }
    }

    static func event(kind: UInt8, body: [UInt8]) throws(Malformed) -> Event {
        switch kind {
        case 1, 2:
            guard let flag = body.first, flag <= 1 else { throw Malformed(description: "no flag in event \(kind)") }
            let reason = String(decoding: body.dropFirst(), as: UTF8.self)
            return kind == 1 ? .started(flag == 1, reason) : .connection(flag == 1, reason)
        case 3: return .returned(try message(body))
        case 4: return .refused(String(decoding: body, as: UTF8.self))
        default: throw Malformed(description: "unknown event \(kind)")
        }
    }

    /// qos, retain, the topic's length (2 bytes), the topic, the payload.
    private static func encode(_ message: MQTTMessage) -> [UInt8] {
        let topic = Array(message.topic.utf8)
        return [
            UInt8(clamping: message.qos), message.retain ? 1 : 0, UInt8(topic.count >> 8), UInt8(topic.count & 0xFF),
        ]
            + topic + message.payload
    }

    private static func message(_ body: [UInt8]) throws(Malformed) -> MQTTMessage {
        guard body.count >= 4, body[0] <= 2, body[1] <= 1 else { throw Malformed(description: "short message") }
        let topicLength = Int(body[2]) << 8 | Int(body[3])
        guard body.count >= 4 + topicLength else { throw Malformed(description: "topic past the frame") }
        let topic = String(decoding: body[4..<4 + topicLength], as: UTF8.self)
        return MQTTMessage(
            topic: topic,
            payload: Array(body[(4 + topicLength)...]),
            qos: Int32(body[0]),
            retain: body[1] == 1
        )
    }
}

/// What the child needs to connect: the `[mqtt]` settings it uses, and the last will.
struct ClientSettings: Codable, Equatable {
    var host: String
    var port: Int
    var clientID: String
    var username: String?
    var password: String?
    var usesTLS: Bool
    var caFile: String?
    var willTopic: String
    var willPayload: [UInt8]
}

/// Reads frames from a descriptor, blocking; each at most ``ClientFrames/largestFrame``.
struct FrameReader {
    let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    enum Outcome {
        case frame(kind: UInt8, body: [UInt8])
        case ended
        case malformed(String)
    }

    mutating func next() -> Outcome {
        while true {
            if buffer.count >= 4 {
                let length = buffer[0..<4].reduce(0) { $0 << 8 | Int($1) }
                guard length >= 1, length <= ClientFrames.largestFrame else {
                    return .malformed("a frame of \(length) bytes")
                }
                if buffer.count >= 4 + length {
                    let kind = buffer[4]
                    let body = Array(buffer[5..<4 + length])
                    buffer.removeFirst(4 + length)
                    return .frame(kind: kind, body: body)
                }
            }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .ended }
            buffer += chunk[..<count]
        }
    }
}
