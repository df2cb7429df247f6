/// Where and how systoled publishes (`[mqtt]`).
public struct MQTTSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// `mqtts://`: TLS, checked against `caFile` or the system's certificates.
    public var usesTLS: Bool
    public var caFile: String?
    public var username: String?
    public var password: String?
    public var clientID: String
    /// The live values' topics start with it: `systole/sensor/a09e1a948d23`, `systole/workout`, `systole/status`.
    public var topicPrefix: String
    /// Where Home Assistant listens for discovery configs.
    public var discoveryPrefix: String
    /// Messages held while the broker is away, at most.
    public var queueLimit: Int

    public static let defaultQueueLimit = 1000

    public init(
        host: String,
        port: Int,
        usesTLS: Bool = false,
        caFile: String? = nil,
        username: String? = nil,
        password: String? = nil,
        clientID: String = "systoled",
        topicPrefix: String = "systole",
        discoveryPrefix: String = "homeassistant",
        queueLimit: Int = MQTTSettings.defaultQueueLimit
    ) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.caFile = caFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.topicPrefix = topicPrefix
        self.discoveryPrefix = discoveryPrefix
        self.queueLimit = queueLimit
    }

    /// The topic whose retained `online`/`offline` says whether systoled is there (the last will sets `offline`).
    public var availabilityTopic: String { topicPrefix + "/status" }
}
