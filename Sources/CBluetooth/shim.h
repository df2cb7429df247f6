// CBluetooth — the few libbluetooth calls systole uses: address checking/normalisation (bachk, str2ba,
// ba2str) and company-identifier names (bt_compidtostr). The `BlueZ` module wraps them in
// `BluetoothAddress` and `CompanyIdentifier`; nothing else imports this.
#ifndef SYSTOLE_CBLUETOOTH_SHIM_H
#define SYSTOLE_CBLUETOOTH_SHIM_H

// bluetooth.h uses uint8_t/uint16_t and memcpy in inline helpers without including their headers.
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>

/// Size of the buffer `ba2str` writes: "XX:XX:XX:XX:XX:XX" plus the terminating NUL. libbluetooth has no
/// constant for it; every caller hard-codes 18.
static const int CBT_ADDRESS_STRING_SIZE = 18;

#endif
