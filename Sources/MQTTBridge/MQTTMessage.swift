/// One message to publish.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    /// 0 for the live values (the next one replaces a lost one), 1 for discovery and availability.
    public var qos: Int32
    /// Kept by the broker for later subscribers: discovery configs and availability.
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int32 = 0, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: Int32 = 0, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }
}
