// libmosquitto (Debian's libmosquitto-dev), the MQTT client systoled publishes to Home Assistant with. Swift imports
// it whole: the calls it needs take no variadic arguments and use no macros.
#include <mosquitto.h>
