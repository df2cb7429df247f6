import DBus

/// Reads the one signal a sensor sends hundreds of times a second, `PropertiesChanged` carrying a single byte-array
/// property (a characteristic's `Value: ay`), in place: no `DBusValue` tree, no strings built, no copy of the bytes.
///
/// Anything else, including the same signal changing a second property as well or invalidating one, is not read
/// here; the caller's route declines it and the general path, which handles every signal, takes it.
enum ValueChange {
    private static let signature = ContiguousArray("sa{sv}as".utf8CString)

    /// Calls `body` with the value's bytes and returns true when `message` is a `PropertiesChanged` of `interface`
    /// whose only change is `property` as `ay`; returns false, without calling `body`, otherwise. The bytes are
    /// valid during the call only.
    static func read(
        _ message: DBusMessageView,
        interface: ContiguousArray<CChar>,
        property: ContiguousArray<CChar>,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        guard message.hasSignature(signature), var arguments = message.arguments(), arguments.isString(interface),
            arguments.next(), var changes = arguments.entered(),
            changes.typeCode == DBusArgumentReader.dictionaryEntry, var entry = changes.entered(),
            entry.isString(property), entry.next(), let value = entry.entered(),
            value.typeCode == DBusArgumentReader.array, value.elementTypeCode == DBusArgumentReader.byte
        else { return false }
        // Exactly one change and nothing invalidated: a signal that says more goes the general way.
        guard !changes.next(), arguments.next(), arguments.entered()?.typeCode == DBusArgumentReader.end else {
            return false
        }
        return value.withBytes(body) != nil
    }
}
