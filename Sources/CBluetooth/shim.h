// CBluetooth — the few libbluetooth calls systole uses: address checking/normalisation (bachk,
// str2ba) and company-identifier names (bt_compidtostr). The `BlueZ` module wraps them in
// `BluetoothAddress` and `CompanyIdentifier`; nothing else imports this.
#ifndef SYSTOLE_CBLUETOOTH_SHIM_H
#define SYSTOLE_CBLUETOOTH_SHIM_H

// bluetooth.h uses uint8_t/uint16_t and memcpy in inline helpers without including their headers.
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>

#endif
