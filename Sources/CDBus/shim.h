// CDBus — what Swift cannot import from libdbus-1 on its own.
//
// The `DBus` module is the only user of this header. Everything here is header-only (static inline or
// static const) so the system-library target needs no compiled C code.
#ifndef SYSTOLE_CDBUS_SHIM_H
#define SYSTOLE_CDBUS_SHIM_H

#include <dbus/dbus.h>

// MARK: Type codes
//
// libdbus defines every type code as a cast character literal, e.g. `#define DBUS_TYPE_BYTE ((int) 'y')`.
// Swift's Clang importer only imports macros that are plain literals, so none of these reach Swift; each is
// re-exposed here as a typed constant with the same value.

static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
// `r` and `e` are the abstract codes for structs and dict entries that iterators report; the signature
// characters that delimit them in a signature string are the four *_CHAR constants below.
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
static const int CDBUS_STRUCT_BEGIN_CHAR = DBUS_STRUCT_BEGIN_CHAR;
static const int CDBUS_STRUCT_END_CHAR = DBUS_STRUCT_END_CHAR;
static const int CDBUS_DICT_ENTRY_BEGIN_CHAR = DBUS_DICT_ENTRY_BEGIN_CHAR;
static const int CDBUS_DICT_ENTRY_END_CHAR = DBUS_DICT_ENTRY_END_CHAR;

// MARK: Timeouts
//
// Also cast macros (`((int) 0x7fffffff)`, `(-1)` through a cast), so not importable either.

/// Block until the reply arrives, however long that is.
static const int CDBUS_TIMEOUT_INFINITE = DBUS_TIMEOUT_INFINITE;
/// libdbus's default method-call timeout (25 s).
static const int CDBUS_TIMEOUT_USE_DEFAULT = DBUS_TIMEOUT_USE_DEFAULT;

// MARK: Interface names libdbus 1.14 has no macro for

/// `org.freedesktop.DBus.ObjectManager`: BlueZ exports its whole object tree through it, but libdbus 1.14
/// defines macros only for the interfaces the bus daemon itself implements.
#define CDBUS_INTERFACE_OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"

// MARK: Variadic calls
//
// Swift cannot call C variadic functions. The binding marshals with the non-variadic iterator API, so only
// the two calls below are wrapped, each with a fixed argument list.

/// `dbus_set_error` with a literal message: the message is passed through `"%s"` so text that contains a
/// `%` (a D-Bus error message from a peer, a file path) can never be read as a format string.
static inline void cdbus_set_error(DBusError *error, const char *name, const char *message) {
    dbus_set_error(error, name, "%s", message);
}

/// `dbus_message_get_args` for a message whose arguments are exactly three strings, as the bus's
/// `NameOwnerChanged(name, old_owner, new_owner)` signal is. Watching that signal is how the binding notices
/// bluetoothd restarting, and it arrives often enough on a busy bus that walking an iterator for it is waste.
/// The strings point into `message` and live as long as it does. Returns FALSE and fills `error` when the
/// arguments do not match.
static inline dbus_bool_t cdbus_message_get_three_strings(
    DBusMessage *message, DBusError *error, const char **first, const char **second, const char **third) {
    return dbus_message_get_args(
        message, error,
        DBUS_TYPE_STRING, first,
        DBUS_TYPE_STRING, second,
        DBUS_TYPE_STRING, third,
        DBUS_TYPE_INVALID);
}

#endif
