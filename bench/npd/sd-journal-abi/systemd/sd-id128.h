/* The part of libsystemd's <systemd/sd-id128.h> ABI that go-systemd's sdjournal compiles against (it dlopens
 * libsystemd.so.0 at run time and calls through function pointers, so only types and constants are needed here).
 * For bench/npd/build.mjs: NPD's journald plugin without the libsystemd-dev package. */
#pragma once
#include <stdint.h>

typedef union sd_id128 {
  uint8_t bytes[16];
  uint64_t qwords[2];
} sd_id128_t;

#define SD_ID128_STRING_MAX 33U
