/* The part of libsystemd's <systemd/sd-journal.h> ABI that go-systemd's sdjournal compiles against (see
 * sd-id128.h). Values as in systemd's header. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "sd-id128.h"

typedef struct sd_journal sd_journal;

enum {
  SD_JOURNAL_LOCAL_ONLY = 1 << 0,
  SD_JOURNAL_RUNTIME_ONLY = 1 << 1,
  SD_JOURNAL_SYSTEM = 1 << 2,
  SD_JOURNAL_CURRENT_USER = 1 << 3,
  SD_JOURNAL_OS_ROOT = 1 << 4
};

enum {
  SD_JOURNAL_NOP,
  SD_JOURNAL_APPEND,
  SD_JOURNAL_INVALIDATE
};
