/*
 * Test double of libdcgm.so.4 (DCGM 4.x ABI subset). Built by the tests with the machine's cc; never shipped.
 * Behaviour follows shared/reference/dcgm-nvml.md section 8: version checks (-12), policy callbacks delivered
 * from a separate pthread with a stack-allocated response freed after the callback returns, -34 from
 * dcgmPolicyUnregister while a callback runs, NOT_WATCHED (-16) for unwatched fields, vendor injection API
 * (dcgmInjectFieldValue / dcgmEntityInjectFieldValue), plus nmdouble_* controls for what no vendor API injects
 * (device count, refused / dropped connections, firing a policy violation); NMDOUBLE_DCGM_REFUSE=1 at dcgmInit
 * refuses connections from the start (a host engine that is down, for another process).
 * Control channel for other processes (`nodemend inject`): with NMDOUBLE_DCGM_POLICY_FIFO set at dcgmInit (or
 * nmdouble_watch_policy_fifo called), a reader thread takes dcgmPolicyCallbackResponse_v2 records (32 bytes
 * each, vendor layout) from that FIFO and delivers each as nmdouble_fire_policy does; one line per record in
 * <fifo>.log says how many registrations it reached (test/double/control.ts writes and reads both).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vendor_layouts.h"

int nmdouble_watch_policy_fifo(const char *path);

#define MAX_REG 16
#define MAX_FG 16
#define MAX_FIELDS_PER_FG 128
#define MAX_SAMPLES 256
#define EMBEDDED_HANDLE ((dcgmHandle_t)0x7fffffff)

typedef struct { unsigned short fieldIds[MAX_FIELDS_PER_FG]; int n; int used; int watched; } field_group_t;
typedef struct { fpRecvUpdates cb; unsigned int mask; uint64_t userData; dcgmHandle_t handle; int used; } registration_t;
typedef struct { unsigned int entityGroupId, entityId; dcgmFieldValue_v1 v; } sample_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static int initialized = 0;
static int gpu_count = 0;
static int refuse = 0;
static unsigned long long generation = 1; /* bumped when connections drop */
static unsigned long long handle_generation[64];
static int handle_open[64];
static char last_address[256];
static unsigned int last_unix_socket = 0;
static unsigned int policy_condition[DCGM_MAX_NUM_DEVICES];
static registration_t regs[MAX_REG];
static field_group_t fgs[MAX_FG];
static sample_t samples[MAX_SAMPLES];
static int sample_count = 0;
static int in_flight = 0;
static unsigned int health_systems = 0;
/* Current health incidents, reported by every dcgmHealthCheck (of watched systems) until cleared. */
#define MAX_INCIDENTS 64
static dcgmIncidentInfo_t incidents[MAX_INCIDENTS];
static int incident_count = 0;
/* Per-entity results the next dcgmRunDiagnostic reports. */
#define MAX_DIAG_RESULTS 64
typedef struct { unsigned int testId, entityGroupId, entityId, result, code; char msg[512]; } diag_result_t;
static diag_result_t diag_results[MAX_DIAG_RESULTS];
static int diag_result_count = 0;
static unsigned int last_diag_level = 0;
/* How long dcgmGetValuesSince_v2 takes before its callbacks (a slow host engine), in ms. */
static unsigned int values_since_delay_ms = 0;


static int handle_index(dcgmHandle_t h) {
  if (h == EMBEDDED_HANDLE) return 0;
  if (h < 1 || h >= 64) return -1;
  return (int)h;
}

/* Caller holds mu. */
static dcgmReturn_t check_handle(dcgmHandle_t h) {
  if (!initialized) return DCGM_ST_UNINITIALIZED;
  int i = handle_index(h);
  if (i < 0 || !handle_open[i]) return DCGM_ST_BADPARAM;
  if (handle_generation[i] != generation) return DCGM_ST_CONNECTION_NOT_VALID;
  return DCGM_ST_OK;
}

dcgmReturn_t dcgmInit(void) {
  pthread_mutex_lock(&mu);
  initialized = 1;
  /* Dry runs in a separate process (bench/gpu-device-check.sh): NMDOUBLE_DCGM_GPUS=n presets n GPUs. */
  const char *preset = getenv("NMDOUBLE_DCGM_GPUS");
  if (preset != NULL && gpu_count == 0) {
    gpu_count = atoi(preset);
    /* healthy machine: the software diagnostic passes on every GPU */
    for (int i = 0; i < gpu_count && i < MAX_DIAG_RESULTS; i++)
      diag_results[diag_result_count++] = (diag_result_t){DCGM_SOFTWARE_INDEX, DCGM_FE_GPU, (unsigned int)i, 0, 0, {0}};
  }
  /* A host engine that is down, for a separate process (an agent binary): NMDOUBLE_DCGM_REFUSE=1 refuses connects. */
  const char *refuse_env = getenv("NMDOUBLE_DCGM_REFUSE");
  if (refuse_env != NULL && strcmp(refuse_env, "1") == 0) refuse = 1;
  pthread_mutex_unlock(&mu);
  /* Another process injects policy violations through this FIFO (the demo's `nodemend inject`). */
  const char *fifo = getenv("NMDOUBLE_DCGM_POLICY_FIFO");
  if (fifo != NULL && fifo[0] != '\0') (void)nmdouble_watch_policy_fifo(fifo);
  return DCGM_ST_OK;
}

dcgmReturn_t dcgmShutdown(void) {
  pthread_mutex_lock(&mu);
  while (in_flight > 0) pthread_cond_wait(&idle_cv, &mu);
  memset(regs, 0, sizeof regs);
  memset(handle_open, 0, sizeof handle_open);
  initialized = 0;
  pthread_mutex_unlock(&mu);
  return DCGM_ST_OK;
}

static dcgmReturn_t open_handle(const char *address, unsigned int unixSocket, dcgmHandle_t *out, int embedded) {
  pthread_mutex_lock(&mu);
  if (!initialized) { pthread_mutex_unlock(&mu); return DCGM_ST_UNINITIALIZED; }
  if (!embedded && refuse) { pthread_mutex_unlock(&mu); return DCGM_ST_CONNECTION_NOT_VALID; }
  int slot = -1;
  if (embedded) slot = 0;
  else for (int i = 1; i < 64; i++) if (!handle_open[i]) { slot = i; break; }
  if (slot < 0) { pthread_mutex_unlock(&mu); return DCGM_ST_MAX_LIMIT; }
  handle_open[slot] = 1;
  handle_generation[slot] = generation;
  if (address) { strncpy(last_address, address, sizeof last_address - 1); last_unix_socket = unixSocket; }
  *out = embedded ? EMBEDDED_HANDLE : (dcgmHandle_t)slot;
  pthread_mutex_unlock(&mu);
  return DCGM_ST_OK;
}

dcgmReturn_t dcgmStartEmbedded(unsigned int opMode, dcgmHandle_t *out) {
  if (out == NULL || (opMode != 1 && opMode != 2)) return DCGM_ST_BADPARAM;
  return open_handle(NULL, 0, out, 1);
}

dcgmReturn_t dcgmConnect_v2(const char *address, dcgmConnectV2Params_v2 *params, dcgmHandle_t *out) {
  if (address == NULL || params == NULL || out == NULL) return DCGM_ST_BADPARAM;
  if (params->version != dcgmConnectV2Params_version2 && params->version != dcgmConnectV2Params_version1)
    return DCGM_ST_VER_MISMATCH;
  unsigned int unixSocket = params->version == dcgmConnectV2Params_version2 ? params->addressIsUnixSocket : 0;
  return open_handle(address, unixSocket, out, 0);
}

static void close_handle(dcgmHandle_t h) {
  pthread_mutex_lock(&mu);
  int i = handle_index(h);
  if (i >= 0) handle_open[i] = 0;
  for (int r = 0; r < MAX_REG; r++) if (regs[r].used && regs[r].handle == h) regs[r].used = 0;
  pthread_mutex_unlock(&mu);
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t h) { close_handle(h); return DCGM_ST_OK; }
dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h) { close_handle(h); return DCGM_ST_OK; }

const char *errorString(dcgmReturn_t r) {
  switch (r) {
    case DCGM_ST_OK: return "Success";
    case DCGM_ST_BADPARAM: return "Bad parameter passed to function";
    case DCGM_ST_NOT_CONFIGURED: return "Setting not configured";
    case DCGM_ST_UNINITIALIZED: return "Object is in undefined state";
    case DCGM_ST_VER_MISMATCH: return "Version mismatch";
    case DCGM_ST_NO_DATA: return "No data is available";
    case DCGM_ST_NOT_WATCHED: return "Field is not being updated";
    case DCGM_ST_CONNECTION_NOT_VALID: return "Host engine connection invalid/disconnected";
    case DCGM_ST_IN_USE: return "The requested operation could not be completed because the affected resource is in use.";
    default: return NULL;
  }
}

dcgmReturn_t dcgmHostengineIsHealthy(dcgmHandle_t h, dcgmHostengineHealth_v1 *out) {
  if (out == NULL) return DCGM_ST_BADPARAM;
  if (out->version != dcgmHostengineHealth_version1) return DCGM_ST_VER_MISMATCH;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  pthread_mutex_unlock(&mu);
  if (r == DCGM_ST_OK) out->overallHealth = 0;
  return r;
}

dcgmReturn_t dcgmGetAllDevices(dcgmHandle_t h, unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count) {
  if (gpuIdList == NULL || count == NULL) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK) {
    *count = gpu_count;
    for (int i = 0; i < gpu_count; i++) gpuIdList[i] = (unsigned int)i;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t h, unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count) {
  return dcgmGetAllDevices(h, gpuIdList, count);
}

static int group_valid(dcgmGpuGrp_t g) { return g == DCGM_GROUP_ALL_GPUS || g == DCGM_GROUP_ALL_NVSWITCHES; }

dcgmReturn_t dcgmPolicySet(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmPolicy_v1 *policy, dcgmStatus_t status) {
  (void)status;
  if (policy == NULL) return DCGM_ST_BADPARAM;
  if (policy->version != dcgmPolicy_version1) return DCGM_ST_VER_MISMATCH;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && grp != DCGM_GROUP_ALL_GPUS) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) for (int i = 0; i < DCGM_MAX_NUM_DEVICES; i++) policy_condition[i] = policy->condition;
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmPolicyGet(dcgmHandle_t h, dcgmGpuGrp_t grp, int count, dcgmPolicy_v1 *policies, dcgmStatus_t status) {
  (void)status;
  if (policies == NULL || count < 1) return DCGM_ST_BADPARAM;
  for (int i = 0; i < count; i++) if (policies[i].version != dcgmPolicy_version1) return DCGM_ST_VER_MISMATCH;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && grp != DCGM_GROUP_ALL_GPUS) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK)
    for (int i = 0; i < count && i < DCGM_MAX_NUM_DEVICES; i++) policies[i].condition = policy_condition[i];
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmPolicyRegister_v2(dcgmHandle_t h, dcgmGpuGrp_t grp, unsigned int condMask, fpRecvUpdates cb,
                                   uint64_t userData) {
  if (cb == NULL || condMask == 0) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && grp != DCGM_GROUP_ALL_GPUS) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) {
    r = DCGM_ST_MAX_LIMIT;
    for (int i = 0; i < MAX_REG; i++)
      if (!regs[i].used) {
        regs[i] = (registration_t){cb, condMask, userData, h, 1};
        r = DCGM_ST_OK;
        break;
      }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmPolicyUnregister(dcgmHandle_t h, dcgmGpuGrp_t grp, unsigned int condMask) {
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_CONNECTION_NOT_VALID) r = DCGM_ST_OK; /* the engine side is gone: nothing left to call back */
  if (r == DCGM_ST_OK && !group_valid(grp)) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK && in_flight > 0) r = DCGM_ST_IN_USE;
  if (r == DCGM_ST_OK)
    for (int i = 0; i < MAX_REG; i++)
      if (regs[i].used && regs[i].handle == h && (regs[i].mask & condMask)) regs[i].used = 0;
  pthread_mutex_unlock(&mu);
  return r;
}

/* ---- field groups, watches and values ---- */

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int n, const unsigned short *fieldIds, const char *name,
                                  dcgmFieldGrp_t *out) {
  (void)name;
  if (n < 1 || n > MAX_FIELDS_PER_FG || fieldIds == NULL || out == NULL) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK) {
    r = DCGM_ST_MAX_LIMIT;
    for (int i = 0; i < MAX_FG; i++)
      if (!fgs[i].used) {
        fgs[i].used = 1;
        fgs[i].watched = 0;
        fgs[i].n = n;
        memcpy(fgs[i].fieldIds, fieldIds, sizeof(unsigned short) * (size_t)n);
        *out = (dcgmFieldGrp_t)(i + 1);
        r = DCGM_ST_OK;
        break;
      }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

static field_group_t *fg_of(dcgmFieldGrp_t fg) {
  if (fg < 1 || fg > MAX_FG || !fgs[fg - 1].used) return NULL;
  return &fgs[fg - 1];
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t h, dcgmFieldGrp_t fg) {
  (void)h;
  pthread_mutex_lock(&mu);
  field_group_t *g = fg_of(fg);
  if (g) g->used = 0;
  pthread_mutex_unlock(&mu);
  return g ? DCGM_ST_OK : DCGM_ST_BADPARAM;
}

static dcgmReturn_t set_watch(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fg, int on) {
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  field_group_t *g = fg_of(fg);
  if (r == DCGM_ST_OK && (!g || !group_valid(grp))) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) g->watched = on;
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fg, long long freqUsec, double maxAge,
                             int maxSamples) {
  (void)freqUsec; (void)maxAge; (void)maxSamples;
  return set_watch(h, grp, fg, 1);
}

dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fg) { return set_watch(h, grp, fg, 0); }

dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t h, int wait) {
  (void)wait;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  pthread_mutex_unlock(&mu);
  return r;
}

/* Caller holds mu. */
static int field_watched(unsigned short fieldId) {
  for (int i = 0; i < MAX_FG; i++)
    if (fgs[i].used && fgs[i].watched)
      for (int j = 0; j < fgs[i].n; j++) if (fgs[i].fieldIds[j] == fieldId) return 1;
  return 0;
}

static dcgmReturn_t inject(dcgmHandle_t h, unsigned int entityGroupId, unsigned int entityId, dcgmInjectFieldValue_t *fv) {
  if (fv == NULL) return DCGM_ST_BADPARAM;
  if (fv->version != dcgmFieldValue_version1) return DCGM_ST_VER_MISMATCH;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK) {
    if (sample_count == MAX_SAMPLES) {
      memmove(&samples[0], &samples[1], sizeof(sample_t) * (MAX_SAMPLES - 1));
      sample_count--;
    }
    samples[sample_count].entityGroupId = entityGroupId;
    samples[sample_count].entityId = entityId;
    samples[sample_count].v = *fv;
    sample_count++;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmInjectFieldValue(dcgmHandle_t h, unsigned int gpuId, dcgmInjectFieldValue_t *fv) {
  return inject(h, DCGM_FE_GPU, gpuId, fv);
}

dcgmReturn_t dcgmEntityInjectFieldValue(dcgmHandle_t h, unsigned int entityGroupId, unsigned int entityId,
                                        dcgmInjectFieldValue_t *fv) {
  return inject(h, entityGroupId, entityId, fv);
}

dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t h, dcgmGroupEntityPair_t entities[], unsigned int entityCount,
                                         unsigned short fields[], unsigned int fieldCount, unsigned int flags,
                                         dcgmFieldValue_v2 values[]) {
  if (entities == NULL || fields == NULL || values == NULL) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r != DCGM_ST_OK) { pthread_mutex_unlock(&mu); return r; }
  unsigned int k = 0;
  for (unsigned int e = 0; e < entityCount; e++) {
    for (unsigned int f = 0; f < fieldCount; f++, k++) {
      dcgmFieldValue_v2 *out = &values[k];
      memset(out, 0, sizeof *out);
      out->version = dcgmFieldValue_version2;
      out->entityGroupId = entities[e].entityGroupId;
      out->entityId = entities[e].entityId;
      out->fieldId = fields[f];
      out->fieldType = DCGM_FT_INT64;
      if (!(flags & 1) && !field_watched(fields[f])) {
        out->status = DCGM_ST_NOT_WATCHED;
        out->value.i64 = DCGM_INT64_BLANK;
        continue;
      }
      const sample_t *latest = NULL;
      for (int s = 0; s < sample_count; s++)
        if (samples[s].entityGroupId == entities[e].entityGroupId && samples[s].entityId == entities[e].entityId &&
            samples[s].v.fieldId == fields[f] && (latest == NULL || samples[s].v.ts >= latest->v.ts))
          latest = &samples[s];
      if (latest == NULL) {
        out->status = DCGM_ST_NO_DATA;
        out->value.i64 = DCGM_INT64_BLANK;
        continue;
      }
      out->fieldType = latest->v.fieldType;
      out->status = latest->v.status;
      out->ts = latest->v.ts;
      memcpy(&out->value, &latest->v.value, sizeof out->value);
    }
  }
  pthread_mutex_unlock(&mu);
  return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetValuesSince_v2(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fg, long long sinceTs,
                                   long long *nextSinceTs, dcgmFieldValueEntityEnumeration_f cb, void *userData) {
  if (cb == NULL || nextSinceTs == NULL) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  field_group_t *g = fg_of(fg);
  if (r == DCGM_ST_OK && (!g || !group_valid(grp))) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK && !g->watched) r = DCGM_ST_NOT_WATCHED;
  if (r != DCGM_ST_OK) { pthread_mutex_unlock(&mu); return r; }
  /* Copy the matching samples out, then call back without the lock (the callback may call back into us). */
  sample_t *copy = calloc((size_t)sample_count + 1, sizeof(sample_t));
  int n = 0;
  long long next = sinceTs;
  for (int s = 0; s < sample_count; s++) {
    if (samples[s].v.ts < sinceTs) continue;
    if (samples[s].entityGroupId != (grp == DCGM_GROUP_ALL_GPUS ? DCGM_FE_GPU : DCGM_FE_SWITCH)) continue;
    int in_group = 0;
    for (int j = 0; j < g->n; j++) if (g->fieldIds[j] == samples[s].v.fieldId) in_group = 1;
    if (!in_group) continue;
    copy[n++] = samples[s];
    if (samples[s].v.ts + 1 > next) next = samples[s].v.ts + 1;
  }
  unsigned int delay_ms = values_since_delay_ms;
  pthread_mutex_unlock(&mu);
  if (delay_ms > 0) usleep(delay_ms * 1000u);
  for (int i = 0; i < n; i++) {
    if (cb(copy[i].entityGroupId, copy[i].entityId, &copy[i].v, 1, userData) < 0) break;
  }
  free(copy);
  *nextSinceTs = next;
  return DCGM_ST_OK;
}

/* ---- health watches ---- */

dcgmReturn_t dcgmHealthSet(dcgmHandle_t h, dcgmGpuGrp_t grp, unsigned int systems) {
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && !group_valid(grp)) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) health_systems = systems;
  pthread_mutex_unlock(&mu);
  return r;
}

dcgmReturn_t dcgmHealthGet(dcgmHandle_t h, dcgmGpuGrp_t grp, unsigned int *systems) {
  if (systems == NULL) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && !group_valid(grp)) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) *systems = health_systems;
  pthread_mutex_unlock(&mu);
  return r;
}

/*
 * Reports the current incidents whose system is watched (dcgmHealthSet), like DCGM's health module, which
 * only evaluates watched systems. overallHealth is the worst incident's verdict.
 */
dcgmReturn_t dcgmHealthCheck(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmHealthResponse_v5 *out) {
  if (out == NULL) return DCGM_ST_BADPARAM;
  if (out->version != dcgmHealthResponse_version5) return DCGM_ST_VER_MISMATCH;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && grp != DCGM_GROUP_ALL_GPUS) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) {
    unsigned int version = out->version;
    memset(out, 0, sizeof *out);
    out->version = version;
    out->overallHealth = DCGM_HEALTH_RESULT_PASS;
    for (int i = 0; i < incident_count; i++) {
      if (!(health_systems & incidents[i].system)) continue;
      out->incidents[out->incidentCount++] = incidents[i];
      if (incidents[i].health > out->overallHealth) out->overallHealth = incidents[i].health;
    }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

/* ---- active diagnostics ---- */


/*
 * Reports the injected per-entity results: one results[] entry each, one errors[] entry for each that carries a
 * message (as NVVS reports a failing test), and one tests[] entry per distinct test id with the worst verdict.
 */
dcgmReturn_t dcgmRunDiagnostic(dcgmHandle_t h, dcgmGpuGrp_t grp, unsigned int level, dcgmDiagResponse_v12 *out) {
  if (out == NULL) return DCGM_ST_BADPARAM;
  if (out->version != dcgmDiagResponse_version12) return DCGM_ST_VER_MISMATCH;
  if (level != 10 && level != 20 && level != 30 && level != 40) return DCGM_ST_BADPARAM;
  pthread_mutex_lock(&mu);
  dcgmReturn_t r = check_handle(h);
  if (r == DCGM_ST_OK && grp != DCGM_GROUP_ALL_GPUS) r = DCGM_ST_NOT_CONFIGURED;
  if (r == DCGM_ST_OK) {
    last_diag_level = level;
    unsigned int version = out->version;
    memset(out, 0, sizeof *out);
    out->version = version;
    strncpy(out->dcgmVersion, "4.6.0", sizeof out->dcgmVersion - 1);
    unsigned int test_ids[20];
    for (int i = 0; i < diag_result_count; i++) {
      const diag_result_t *d = &diag_results[i];
      dcgmDiagEntityResult_v1 *res = &out->results[out->numResults];
      res->entity.entityGroupId = d->entityGroupId;
      res->entity.entityId = d->entityId;
      res->result = (dcgmDiagResult_t)d->result;
      res->testId = d->testId;
      int t = 0;
      while (t < out->numTests && test_ids[t] != d->testId) t++;
      if (t == out->numTests) {
        if (t == 20) continue;
        out->numTests++;
        test_ids[t] = d->testId;
        snprintf(out->tests[t].name, sizeof out->tests[t].name, "%s", d->testId == DCGM_SOFTWARE_INDEX ? "software" : "test");
      }
      dcgmDiagTestRun_v2 *test = &out->tests[t];
      if (d->result > (unsigned int)test->result) test->result = (dcgmDiagResult_t)d->result;
      test->resultIndices[test->numResults++] = out->numResults;
      if (d->msg[0] != '\0' && out->numErrors < 32) {
        dcgmDiagError_v1 *e = &out->errors[out->numErrors];
        e->entity = res->entity;
        e->code = d->code;
        e->testId = d->testId;
        strncpy(e->msg, d->msg, sizeof e->msg - 1);
        test->errorIndices[test->numErrors++] = out->numErrors++;
      }
      out->numResults++;
    }
  }
  pthread_mutex_unlock(&mu);
  return r;
}

/* ---- injection controls (double only) ---- */

/* One per-entity diagnostic result (dcgmDiagResult_t verdict; msg empty = no error entry). */
int nmdouble_add_diag_result(unsigned int testId, unsigned int entityGroupId, unsigned int entityId,
                             unsigned int result, unsigned int code, const char *msg) {
  pthread_mutex_lock(&mu);
  int rc = -1;
  if (diag_result_count < MAX_DIAG_RESULTS) {
    diag_result_t *d = &diag_results[diag_result_count++];
    memset(d, 0, sizeof *d);
    *d = (diag_result_t){testId, entityGroupId, entityId, result, code, {0}};
    if (msg != NULL) strncpy(d->msg, msg, sizeof d->msg - 1);
    rc = 0;
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

unsigned int nmdouble_last_diag_level(void) { pthread_mutex_lock(&mu); unsigned int l = last_diag_level; pthread_mutex_unlock(&mu); return l; }

/* Adds a current health incident; returns 0, or -1 when the table is full. */
int nmdouble_add_health_incident(unsigned int system, unsigned int health, unsigned int code, const char *msg,
                                 unsigned int entityGroupId, unsigned int entityId) {
  pthread_mutex_lock(&mu);
  int rc = -1;
  if (incident_count < MAX_INCIDENTS) {
    dcgmIncidentInfo_t *x = &incidents[incident_count++];
    memset(x, 0, sizeof *x);
    x->system = system;
    x->health = (dcgmHealthWatchResults_t)health;
    x->error.code = code;
    if (msg != NULL) strncpy(x->error.msg, msg, sizeof x->error.msg - 1);
    x->entityInfo.entityGroupId = entityGroupId;
    x->entityInfo.entityId = entityId;
    rc = 0;
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

void nmdouble_clear_health_incidents(void) { pthread_mutex_lock(&mu); incident_count = 0; pthread_mutex_unlock(&mu); }

void nmdouble_reset(void) {
  pthread_mutex_lock(&mu);
  while (in_flight > 0) pthread_cond_wait(&idle_cv, &mu);
  gpu_count = 0; refuse = 0; sample_count = 0; health_systems = 0; incident_count = 0;
  diag_result_count = 0; last_diag_level = 0; values_since_delay_ms = 0;
  memset(policy_condition, 0, sizeof policy_condition);
  memset(fgs, 0, sizeof fgs);
  memset(regs, 0, sizeof regs);
  memset(last_address, 0, sizeof last_address);
  last_unix_socket = 0;
  pthread_mutex_unlock(&mu);
}

void nmdouble_set_gpu_count(int n) {
  pthread_mutex_lock(&mu);
  gpu_count = n < 0 ? 0 : (n > DCGM_MAX_NUM_DEVICES ? DCGM_MAX_NUM_DEVICES : n);
  pthread_mutex_unlock(&mu);
}

void nmdouble_set_values_since_delay_ms(unsigned int ms) {
  pthread_mutex_lock(&mu); values_since_delay_ms = ms; pthread_mutex_unlock(&mu);
}

void nmdouble_refuse_connections(int on) { pthread_mutex_lock(&mu); refuse = on; pthread_mutex_unlock(&mu); }

/* Every open connection becomes invalid (nv-hostengine restarted); calls on it return -21. */
void nmdouble_drop_connections(void) { pthread_mutex_lock(&mu); generation++; pthread_mutex_unlock(&mu); }

const char *nmdouble_last_address(void) { return last_address; }
unsigned int nmdouble_last_unix_socket(void) { return last_unix_socket; }
int nmdouble_callbacks_in_flight(void) { pthread_mutex_lock(&mu); int n = in_flight; pthread_mutex_unlock(&mu); return n; }
/* Live registrations: on an open connection of the current generation (a dropped one no longer counts). */
int nmdouble_registration_count(void) {
  pthread_mutex_lock(&mu);
  int n = 0;
  for (int i = 0; i < MAX_REG; i++) {
    int hi = handle_index(regs[i].handle);
    n += regs[i].used && hi >= 0 && handle_open[hi] && handle_generation[hi] == generation;
  }
  pthread_mutex_unlock(&mu);
  return n;
}

typedef struct { dcgmPolicyCallbackResponse_v2 resp; } fire_arg_t;

static void *fire_thread(void *p) {
  fire_arg_t *arg = p;
  registration_t targets[MAX_REG];
  int n = 0;
  pthread_mutex_lock(&mu);
  unsigned int gpu = arg->resp.gpuId;
  if (gpu < DCGM_MAX_NUM_DEVICES && (policy_condition[gpu] & arg->resp.condition)) {
    for (int i = 0; i < MAX_REG; i++) {
      int hi = handle_index(regs[i].handle);
      if (regs[i].used && (regs[i].mask & arg->resp.condition) && hi >= 0 && handle_generation[hi] == generation)
        targets[n++] = regs[i];
    }
  }
  in_flight += n;
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; i++) {
    /* Stack copy, as DCGM does: valid only during the call. Scribbled over afterwards to catch late readers. */
    dcgmPolicyCallbackResponse_v2 onStack = arg->resp;
    (void)targets[i].cb(&onStack, targets[i].userData);
    memset(&onStack, 0xA5, sizeof onStack);
    pthread_mutex_lock(&mu);
    in_flight--;
    if (in_flight == 0) pthread_cond_broadcast(&idle_cv);
    pthread_mutex_unlock(&mu);
  }
  free(arg);
  return NULL;
}

/*
 * Fires a policy violation from a new detached pthread (DCGM delivers from its own threads). Returns at once:
 * 0 when the thread started. The violation reaches registrations whose mask has the condition bit, provided
 * dcgmPolicySet enabled that bit for the GPU.
 */
int nmdouble_fire_policy(const dcgmPolicyCallbackResponse_v2 *resp) {
  if (resp == NULL) return -1;
  fire_arg_t *arg = malloc(sizeof *arg);
  arg->resp = *resp;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, fire_thread, arg);
  pthread_attr_destroy(&attr);
  if (rc != 0) { free(arg); return -1; }
  return 0;
}

/* ---- control channel: policy violations from another process ---- */

/* Caller holds mu. The registrations a violation reaches, by the rule fire_thread applies. */
static int policy_targets(const dcgmPolicyCallbackResponse_v2 *resp) {
  unsigned int gpu = resp->gpuId;
  if (gpu >= DCGM_MAX_NUM_DEVICES || !(policy_condition[gpu] & resp->condition)) return 0;
  int n = 0;
  for (int i = 0; i < MAX_REG; i++) {
    int hi = handle_index(regs[i].handle);
    n += regs[i].used && (regs[i].mask & resp->condition) && hi >= 0 && handle_generation[hi] == generation;
  }
  return n;
}

static pthread_mutex_t control_mu = PTHREAD_MUTEX_INITIALIZER;
static int control_fd = -1;
static char control_log_path[4096];

static void *control_thread(void *p) {
  int fd = (int)(intptr_t)p;
  for (;;) {
    dcgmPolicyCallbackResponse_v2 resp;
    size_t got = 0;
    while (got < sizeof resp) {
      ssize_t r = read(fd, (char *)&resp + got, sizeof resp - got);
      if (r > 0) got += (size_t)r;
      else if (r < 0 && errno == EINTR) continue;
      else return NULL; /* cannot happen while we hold a write end; stop rather than spin */
    }
    pthread_mutex_lock(&mu);
    int n = policy_targets(&resp);
    pthread_mutex_unlock(&mu);
    int rc = n > 0 ? nmdouble_fire_policy(&resp) : 0;
    FILE *log = fopen(control_log_path, "a");
    if (log != NULL) {
      /* every union member starts with the sample's timestamp (long long, microseconds) */
      fprintf(log, "ts=%lld version=0x%08x condition=0x%x gpu=%u delivered=%d\n", resp.val.dbe.timestamp,
              resp.version, resp.condition, resp.gpuId, rc == 0 ? n : -1);
      fclose(log);
    }
  }
}

/*
 * Starts the control channel on `path` (created as a FIFO if absent). Opened read-write, so the reader never
 * sees end-of-file between writers, and a writer opening with O_NONBLOCK gets ENXIO only when no double is
 * reading. Returns 0, 1 when already watching, -1 on error (printed to stderr). Records are delivered as
 * nmdouble_fire_policy delivers them: DCGM drops a violation no registration asked for, so does the double.
 */
int nmdouble_watch_policy_fifo(const char *path) {
  if (path == NULL || strlen(path) + sizeof ".log" > sizeof control_log_path) return -1;
  pthread_mutex_lock(&control_mu);
  if (control_fd >= 0) { pthread_mutex_unlock(&control_mu); return 1; }
  struct stat st;
  if (mkfifo(path, 0600) != 0 && errno != EEXIST) goto fail;
  if (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode)) { errno = EEXIST; goto fail; }
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) goto fail;
  snprintf(control_log_path, sizeof control_log_path, "%s.log", path);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, control_thread, (void *)(intptr_t)fd);
  pthread_attr_destroy(&attr);
  if (rc != 0) { close(fd); errno = rc; goto fail; }
  control_fd = fd;
  pthread_mutex_unlock(&control_mu);
  return 0;
fail:
  fprintf(stderr, "nmdouble: policy FIFO %s: %s\n", path, strerror(errno));
  pthread_mutex_unlock(&control_mu);
  return -1;
}
