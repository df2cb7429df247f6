// CMalloc — glibc's malloc tuning for the daemon's entry point. Swift's Glibc module does not include
// <malloc.h>, so neither `mallopt` nor its parameter macros are visible without this header.
#ifndef SYSTOLE_CMALLOC_SHIM_H
#define SYSTOLE_CMALLOC_SHIM_H

#include <malloc.h>

/// `M_ARENA_MAX`, the most arenas malloc creates (a macro, which Swift imports only as a plain constant).
static const int CMALLOC_ARENA_MAX = M_ARENA_MAX;

#endif
