/// One D-Bus value of any type, nested as deep as the type system allows.
///
/// Containers carry their element type so that empty arrays still have a signature. A dictionary (`a{kv}`) is an
/// ``array(_:_:)`` of ``dictEntry(_:_:)`` values, exactly as on the wire; ``dictionary(_:)`` and
/// ``dictionaryEntries`` make that convenient.
// Only the cases that hold a value directly are indirect: marking the whole enum so boxed every value, a byte of
// an `ay` or a string included, which made reading a notification a few dozen allocations.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor. Received descriptors are owned by the receiver, who must close them.
    case unixFD(Int32)
    indirect case variant(DBusValue)
    /// An array whose elements all have the given type.
    case array(DBusType, [DBusValue])
    /// A key/value pair; only valid as an element of an array.
    indirect case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])

    /// The file descriptors the value holds, at any depth.
    public var unixFDs: [Int32] {
        switch self {
        case .unixFD(let fd): [fd]
        case .variant(let value): value.unixFDs
        case .array(_, let elements), .structure(let elements): elements.flatMap(\.unixFDs)
        case .dictEntry(let key, let value): key.unixFDs + value.unixFDs
        default: []
        }
    }

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }
}

// MARK: - Building values

extension DBusValue {
    /// An `a{sv}` property map.
    public static func propertyMap(_ entries: [String: DBusValue]) -> DBusValue {
        .array(
            .dictEntry(key: .string, value: .variant),
            entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) }
        )
    }

    /// A dictionary with the given key and value types.
    public static func dictionary(
        key: DBusType,
        value: DBusType,
        _ entries: [(DBusValue, DBusValue)]
    ) -> DBusValue {
        .array(.dictEntry(key: key, value: value), entries.map { .dictEntry($0.0, $0.1) })
    }

    /// `ay` from bytes.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(.byte, bytes.map(DBusValue.byte))
    }

    /// `as` from strings.
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(.string, strings.map(DBusValue.string))
    }

    /// `ao` from object paths.
    public static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(.objectPath, paths.map(DBusValue.objectPath))
    }
}

// MARK: - Reading values

extension DBusValue {
    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The text of a string, object path or signature.
    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type that fits in an `Int64`, widened.
    public var int64: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    public var double: Double? {
        if case .double(let value) = unwrapped { return value }
        return nil
    }

    /// The elements of an array.
    public var array: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The bytes of an `ay`.
    public var bytes: [UInt8]? {
        guard case .array(.byte, let elements) = unwrapped else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The strings of an `as` or `ao`.
    public var strings: [String]? {
        array.flatMap { elements in
            let strings = elements.compactMap(\.string)
            return strings.count == elements.count ? strings : nil
        }
    }

    /// The key/value pairs of a dictionary, in wire order.
    public var dictionaryEntries: [(key: DBusValue, value: DBusValue)]? {
        guard case .array(.dictEntry, let elements) = unwrapped else { return nil }
        return elements.compactMap { element in
            if case .dictEntry(let key, let value) = element { return (key, value) }
            return nil
        }
    }

    /// An `a{s…}` dictionary as a Swift dictionary with variants unwrapped one level (the form of every BlueZ
    /// property map). Later duplicate keys win.
    public var propertyMap: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var map: [String: DBusValue] = [:]
        for (key, value) in entries {
            guard let name = key.string else { return nil }
            if case .variant(let inner) = value { map[name] = inner } else { map[name] = value }
        }
        return map
    }

    /// The fields of a struct.
    public var fields: [DBusValue]? {
        if case .structure(let fields) = unwrapped { return fields }
        return nil
    }
}
