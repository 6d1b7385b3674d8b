/*
 * Test double of libnvidia-ml.so.1 (NVML API subset). Built by the tests with the machine's cc; never shipped.
 * Layouts and behaviour from shared/reference/dcgm-nvml.md sections 5 and 8: version checks (25), a v3 fabric
 * info request on an "old driver" returns 25 so the client falls back to v2, event waits that block up to the
 * timeout and return NVML_ERROR_TIMEOUT (10) when idle, XID events (0x8) carrying the XID in eventData.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vendor_layouts.h"

#define MAX_DEV 32
#define MAX_PAGES 64
#define MAX_EVENTS 64

struct nvmlDevice_st {
  int index;
  unsigned long long clockReasons;
  unsigned char fabricState;
  nvmlReturn_t fabricStatus;
  unsigned int cliqueId;
  unsigned int healthMask;
  unsigned char healthSummary;
  nvmlReturn_t fabricReturn;
  unsigned int corrRows, uncRows, pending, failure;
  nvmlReturn_t remapReturn;
  unsigned long long pages[2][MAX_PAGES];
  unsigned long long pageTs[2][MAX_PAGES];
  unsigned int pageCount[2];
  unsigned int pciDomain, pciBus, pciDevice; /* default: 0000:(0x10 + index):00.0 */
  unsigned int recoveryAction;
  /* What field 230 answers: 0 the value; else this nvmlReturn_t per value (a driver before R570 answers
     NOT_SUPPORTED), or, negated, for the whole call. */
  int recoveryReturn;
};

struct nvmlEventSet_st {
  unsigned long long masks[MAX_DEV];
  nvmlEventData_t queue[MAX_EVENTS];
  int head, count;
  int freed;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int init_count = 0;
static unsigned int device_count = 0;
static int old_driver = 0;
static struct nvmlDevice_st devices[MAX_DEV];
static struct nvmlEventSet_st *sets[8];

/*
 * Dry runs of bench/gpu-device-check.sh against the double run in another process than any injector, so
 * NMDOUBLE_NVML_DEVICES=n presets n healthy devices (fabric COMPLETED, mask 0x1AA, summary healthy, GPU idle).
 */
static void preset_from_env(void) {
  const char *n = getenv("NMDOUBLE_NVML_DEVICES");
  if (n == NULL || device_count != 0) return;
  device_count = (unsigned int)atoi(n);
  if (device_count > MAX_DEV) device_count = MAX_DEV;
  for (unsigned int i = 0; i < device_count; i++) {
    devices[i].index = (int)i;
    devices[i].fabricState = 3;
    devices[i].healthMask = 0x1AA;
    devices[i].healthSummary = 1;
    devices[i].clockReasons = 0x1;
  }
}

nvmlReturn_t nvmlInit_v2(void) {
  pthread_mutex_lock(&mu);
  init_count++;
  preset_from_env();
  pthread_mutex_unlock(&mu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = init_count > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
  if (init_count > 0) init_count--;
  pthread_mutex_unlock(&mu);
  return r;
}

const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}

static nvmlReturn_t ready(void) { return init_count > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED; }

static struct nvmlDevice_st *dev(nvmlDevice_t d) {
  for (unsigned int i = 0; i < device_count; i++) if (&devices[i] == d) return d;
  return NULL;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  if (r == NVML_SUCCESS) *count = device_count;
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *out) {
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  if (r == NVML_SUCCESS && index >= device_count) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) *out = &devices[index];
  pthread_mutex_unlock(&mu);
  return r;
}

/* busId formats as the driver prints it: "%08X:%02X:%02X.0", busIdLegacy "%04X:%02X:%02X.0". */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
  if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && x == NULL) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) {
    memset(pci, 0, sizeof *pci);
    unsigned int bus = x->pciBus != 0 ? x->pciBus : 0x10u + (unsigned int)x->index;
    pci->domain = x->pciDomain;
    pci->bus = bus;
    pci->device = x->pciDevice;
    pci->pciDeviceId = 0x233010DEu; /* device id << 16 | vendor: pci.ids 10de:2330 "GH100 [H100 SXM5 80GB]" */
    pci->pciSubSystemId = 0;
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", x->pciDomain, bus, x->pciDevice);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", x->pciDomain & 0xFFFFu, bus, x->pciDevice);
  }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *mask) {
  if (mask == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && x == NULL) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) *mask = x->clockReasons;
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v3_t *info) {
  if (info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != nvmlGpuFabricInfo_v2 && info->version != nvmlGpuFabricInfo_v3)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && x == NULL) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS && old_driver && info->version == nvmlGpuFabricInfo_v3) r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (r == NVML_SUCCESS && x->fabricReturn != NVML_SUCCESS) r = x->fabricReturn;
  if (r == NVML_SUCCESS) {
    memset(info->clusterUuid, 0, sizeof info->clusterUuid);
    info->clusterUuid[0] = 0x10; info->clusterUuid[15] = 0xde;
    info->status = x->fabricStatus;
    info->cliqueId = x->cliqueId;
    info->state = x->fabricState;
    info->healthMask = x->healthMask;
    if (info->version == nvmlGpuFabricInfo_v3) info->healthSummary = x->healthSummary;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t d, unsigned int cause, unsigned int *count,
                                          unsigned long long *addresses, unsigned long long *timestamps) {
  if (count == NULL || cause > 1) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && x == NULL) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) {
    unsigned int have = x->pageCount[cause];
    if (*count < have) {
      *count = have;
      r = *count == 0 && have == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    } else {
      *count = have;
      for (unsigned int i = 0; i < have; i++) {
        if (addresses) addresses[i] = x->pages[cause][i];
        if (timestamps) timestamps[i] = x->pageTs[cause][i];
      }
    }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, unsigned int cause, unsigned int *count,
                                       unsigned long long *addresses) {
  return nvmlDeviceGetRetiredPages_v2(d, cause, count, addresses, NULL);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc, unsigned int *pending,
                                       unsigned int *failure) {
  if (!corr || !unc || !pending || !failure) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && x == NULL) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS && x->remapReturn != NVML_SUCCESS) r = x->remapReturn;
  if (r == NVML_SUCCESS) { *corr = x->corrRows; *unc = x->uncRows; *pending = x->pending; *failure = x->failure; }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *out) {
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  if (r == NVML_SUCCESS) {
    r = NVML_ERROR_NOT_SUPPORTED;
    for (int i = 0; i < 8; i++)
      if (sets[i] == NULL) {
        sets[i] = calloc(1, sizeof(struct nvmlEventSet_st));
        *out = sets[i];
        r = NVML_SUCCESS;
        break;
      }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && (x == NULL || set == NULL)) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS) set->masks[x->index] |= types;
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutMs) {
  if (set == NULL || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeoutMs / 1000;
  deadline.tv_nsec += (long)(timeoutMs % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
  pthread_mutex_lock(&mu);
  while (set->count == 0 && !set->freed) {
    if (pthread_cond_timedwait(&cv, &mu, &deadline) != 0) break;
  }
  nvmlReturn_t r = NVML_ERROR_TIMEOUT;
  if (set->count > 0) {
    *data = set->queue[set->head];
    set->head = (set->head + 1) % MAX_EVENTS;
    set->count--;
    r = NVML_SUCCESS;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < 8; i++)
    if (sets[i] == set) { sets[i] = NULL; free(set); pthread_mutex_unlock(&mu); return NVML_SUCCESS; }
  pthread_mutex_unlock(&mu);
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values) {
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = ready();
  struct nvmlDevice_st *x = dev(d);
  if (r == NVML_SUCCESS && (x == NULL || values == NULL || count <= 0)) r = NVML_ERROR_INVALID_ARGUMENT;
  if (r == NVML_SUCCESS && x->recoveryReturn < 0) r = -x->recoveryReturn;
  for (int k = 0; r == NVML_SUCCESS && k < count; k++) {
    nvmlFieldValue_t *v = &values[k];
    v->timestamp = (long long)time(NULL) * 1000000LL;
    v->latencyUsec = 0;
    if (v->fieldId != NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) { v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; continue; }
    v->nvmlReturn = x->recoveryReturn;
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    v->value.ullVal = 0;
    if (x->recoveryReturn == NVML_SUCCESS) v->value.uiVal = x->recoveryAction;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

/* ---- injection controls (double only) ---- */

void nmdouble_nvml_reset(void) {
  pthread_mutex_lock(&mu);
  device_count = 0; old_driver = 0;
  memset(devices, 0, sizeof devices);
  for (int i = 0; i < MAX_DEV; i++) devices[i].index = i;
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_device_count(unsigned int n) {
  pthread_mutex_lock(&mu);
  device_count = n > MAX_DEV ? MAX_DEV : n;
  for (int i = 0; i < MAX_DEV; i++) devices[i].index = i;
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_old_driver(int on) { pthread_mutex_lock(&mu); old_driver = on; pthread_mutex_unlock(&mu); }

void nmdouble_nvml_set_clock_reasons(unsigned int i, unsigned long long mask) {
  pthread_mutex_lock(&mu); if (i < MAX_DEV) devices[i].clockReasons = mask; pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_fabric(unsigned int i, unsigned char state, int status, unsigned int cliqueId,
                              unsigned int healthMask, unsigned char healthSummary, int callReturn) {
  pthread_mutex_lock(&mu);
  if (i < MAX_DEV) {
    devices[i].fabricState = state; devices[i].fabricStatus = status; devices[i].cliqueId = cliqueId;
    devices[i].healthMask = healthMask; devices[i].healthSummary = healthSummary; devices[i].fabricReturn = callReturn;
  }
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_remapped_rows(unsigned int i, unsigned int corr, unsigned int unc, unsigned int pending,
                                     unsigned int failure, int callReturn) {
  pthread_mutex_lock(&mu);
  if (i < MAX_DEV) {
    devices[i].corrRows = corr; devices[i].uncRows = unc; devices[i].pending = pending; devices[i].failure = failure;
    devices[i].remapReturn = callReturn;
  }
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_add_retired_page(unsigned int i, unsigned int cause, unsigned long long address,
                                    unsigned long long ts) {
  pthread_mutex_lock(&mu);
  if (i < MAX_DEV && cause <= 1 && devices[i].pageCount[cause] < MAX_PAGES) {
    unsigned int k = devices[i].pageCount[cause]++;
    devices[i].pages[cause][k] = address;
    devices[i].pageTs[cause][k] = ts;
  }
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_recovery_action(unsigned int i, unsigned int action, int fieldReturn) {
  pthread_mutex_lock(&mu);
  if (i < MAX_DEV) { devices[i].recoveryAction = action; devices[i].recoveryReturn = fieldReturn; }
  pthread_mutex_unlock(&mu);
}

void nmdouble_nvml_set_pci(unsigned int i, unsigned int domain, unsigned int bus, unsigned int device) {
  pthread_mutex_lock(&mu);
  if (i < MAX_DEV) { devices[i].pciDomain = domain; devices[i].pciBus = bus; devices[i].pciDevice = device; }
  pthread_mutex_unlock(&mu);
}

/* Posts an event for device i to every event set registered for that event type; returns how many got it. */
int nmdouble_nvml_post_event(unsigned int i, unsigned long long eventType, unsigned long long eventData) {
  int delivered = 0;
  pthread_mutex_lock(&mu);
  for (int s = 0; s < 8 && i < device_count; s++) {
    struct nvmlEventSet_st *set = sets[s];
    if (set == NULL || !(set->masks[i] & eventType) || set->count == MAX_EVENTS) continue;
    nvmlEventData_t *e = &set->queue[(set->head + set->count) % MAX_EVENTS];
    e->device = &devices[i];
    e->eventType = eventType;
    e->eventData = eventData;
    e->gpuInstanceId = 0xFFFFFFFFu;
    e->computeInstanceId = 0xFFFFFFFFu;
    set->count++;
    delivered++;
  }
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return delivered;
}
