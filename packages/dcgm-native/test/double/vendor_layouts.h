/*
 * Struct layouts, constants and prototypes of the DCGM 4.x / NVML subset the test double implements,
 * written from the vendor-documented layouts in shared/reference/dcgm-nvml.md (sections 1-5), not copied
 * from vendor headers. Tests assert that koffi computes the same sizes/offsets as this C compiler does.
 */
#ifndef NODEMEND_VENDOR_LAYOUTS_H
#define NODEMEND_VENDOR_LAYOUTS_H
#include <stdint.h>

#define MAKE_DCGM_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24)))

typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
typedef uintptr_t dcgmStatus_t;
typedef int dcgmReturn_t;

enum {
  DCGM_ST_OK = 0, DCGM_ST_BADPARAM = -1, DCGM_ST_GENERIC_ERROR = -3, DCGM_ST_NOT_CONFIGURED = -5,
  DCGM_ST_NOT_SUPPORTED = -6, DCGM_ST_INIT_ERROR = -7, DCGM_ST_UNINITIALIZED = -10, DCGM_ST_VER_MISMATCH = -12,
  DCGM_ST_UNKNOWN_FIELD = -13, DCGM_ST_NO_DATA = -14, DCGM_ST_NOT_WATCHED = -16, DCGM_ST_CONNECTION_NOT_VALID = -21,
  DCGM_ST_MAX_LIMIT = -24, DCGM_ST_INSUFFICIENT_SIZE = -31, DCGM_ST_IN_USE = -34
};

#define DCGM_GROUP_ALL_GPUS 0x7fffffff
#define DCGM_GROUP_ALL_NVSWITCHES 0x7ffffffe
#define DCGM_MAX_NUM_DEVICES 32
#define DCGM_MAX_NUM_SWITCHES 12
#define DCGM_FE_NONE 0
#define DCGM_FE_GPU 1
#define DCGM_FE_SWITCH 3
#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_INT64 'i'
#define DCGM_FT_STRING 's'
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096

typedef struct { unsigned int version; unsigned int persistAfterDisconnect; unsigned int timeoutMs;
                 unsigned int addressIsUnixSocket; } dcgmConnectV2Params_v2;
#define dcgmConnectV2Params_version1 0x01000008u
#define dcgmConnectV2Params_version2 MAKE_DCGM_VERSION(dcgmConnectV2Params_v2, 2)

typedef struct { unsigned int version; unsigned int overallHealth; } dcgmHostengineHealth_v1;
#define dcgmHostengineHealth_version1 MAKE_DCGM_VERSION(dcgmHostengineHealth_v1, 1)

/* Policy (section 2) */
typedef struct {
  unsigned int tag;
  union { unsigned int boolean; unsigned long long llval; } val;
} dcgmPolicyConditionParams_t;

typedef struct {
  unsigned int version, condition, mode, isolation, action, validation, response;
  dcgmPolicyConditionParams_t parms[7];
} dcgmPolicy_v1;
#define dcgmPolicy_version1 MAKE_DCGM_VERSION(dcgmPolicy_v1, 1)

typedef struct { long long timestamp; unsigned int location; unsigned int numerrors; } dcgmPolicyConditionDbe_t;
typedef struct { long long timestamp; unsigned int counter; } dcgmPolicyConditionPci_t;
typedef struct { long long timestamp; unsigned int sbepages; unsigned int dbepages; } dcgmPolicyConditionMpr_t;
typedef struct { long long timestamp; unsigned int thermalViolation; } dcgmPolicyConditionThermal_t;
typedef struct { long long timestamp; unsigned int powerViolation; } dcgmPolicyConditionPower_t;
typedef struct { long long timestamp; unsigned short fieldId; unsigned int counter; } dcgmPolicyConditionNvlink_t;
typedef struct { long long timestamp; unsigned int errnum; } dcgmPolicyConditionXID_t;

typedef struct {
  unsigned int version;
  unsigned int condition;
  union {
    dcgmPolicyConditionDbe_t dbe;
    dcgmPolicyConditionPci_t pci;
    dcgmPolicyConditionMpr_t mpr;
    dcgmPolicyConditionThermal_t thermal;
    dcgmPolicyConditionPower_t power;
    dcgmPolicyConditionNvlink_t nvlink;
    dcgmPolicyConditionXID_t xid;
  } val;
  unsigned int gpuId;
} dcgmPolicyCallbackResponse_v2;
#define dcgmPolicyCallbackResponse_version2 MAKE_DCGM_VERSION(dcgmPolicyCallbackResponse_v2, 2)

typedef int (*fpRecvUpdates)(dcgmPolicyCallbackResponse_v2 *response, uint64_t userData);

/* Field values (section 3) */
typedef struct {
  unsigned int version;
  unsigned short fieldId;
  unsigned short fieldType;
  int status;
  long long ts;
  union { long long i64; double dbl; char str[DCGM_MAX_STR_LENGTH]; char blob[DCGM_MAX_BLOB_LENGTH]; } value;
} dcgmFieldValue_v1;
#define dcgmFieldValue_version1 MAKE_DCGM_VERSION(dcgmFieldValue_v1, 1)
typedef dcgmFieldValue_v1 dcgmInjectFieldValue_t;

typedef struct {
  unsigned int version;
  unsigned int entityGroupId;
  unsigned int entityId;
  unsigned short fieldId;
  unsigned short fieldType;
  int status;
  unsigned int unused;
  long long ts;
  union { long long i64; double dbl; char str[DCGM_MAX_STR_LENGTH]; char blob[DCGM_MAX_BLOB_LENGTH]; } value;
} dcgmFieldValue_v2;
#define dcgmFieldValue_version2 MAKE_DCGM_VERSION(dcgmFieldValue_v2, 2)

typedef struct { unsigned int entityGroupId; unsigned int entityId; } dcgmGroupEntityPair_t;

typedef int (*dcgmFieldValueEntityEnumeration_f)(unsigned int entityGroupId, unsigned int entityId,
                                                   dcgmFieldValue_v1 *values, int numValues, void *userData);

/* Health checks: not in the reference; written from NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_structs.h (see src/layouts.ts
 * for the size/offset derivation). Codes from dcgmlib/dcgm_errors.h. */
#define DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2 1024
typedef enum { DCGM_HEALTH_RESULT_PASS = 0, DCGM_HEALTH_RESULT_WARN = 10, DCGM_HEALTH_RESULT_FAIL = 20 } dcgmHealthWatchResults_t;
typedef struct { char msg[1024]; unsigned int code; } dcgmDiagErrorDetail_t;
typedef struct {
  unsigned int system; /* dcgmHealthSystems_t */
  dcgmHealthWatchResults_t health;
  dcgmDiagErrorDetail_t error;
  dcgmGroupEntityPair_t entityInfo;
} dcgmIncidentInfo_t;
typedef struct {
  unsigned int version;
  dcgmHealthWatchResults_t overallHealth;
  unsigned int incidentCount;
  dcgmIncidentInfo_t incidents[DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2];
} dcgmHealthResponse_v5;
#define dcgmHealthResponse_version5 MAKE_DCGM_VERSION(dcgmHealthResponse_v5, 5)
_Static_assert(sizeof(dcgmIncidentInfo_t) == 1044, "dcgmIncidentInfo_t");
_Static_assert(sizeof(dcgmHealthResponse_v5) == 1069068, "dcgmHealthResponse_v5");

/* Active diagnostics: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_structs.h (derivation in src/layouts.ts). */
typedef enum { DCGM_DIAG_RESULT_PASS = 0, DCGM_DIAG_RESULT_SKIP = 1, DCGM_DIAG_RESULT_WARN = 2,
               DCGM_DIAG_RESULT_FAIL = 3, DCGM_DIAG_RESULT_NOT_RUN = 4 } dcgmDiagResult_t;
typedef struct { unsigned int version; char data[2048]; } dcgmDiagTestAuxData_v1;
typedef struct {
  char name[32];
  char pluginName[32];
  dcgmDiagResult_t result;
  unsigned char numErrors, numInfo, categoryIndex, _unused;
  unsigned short numResults;
  unsigned char errorIndices[32];
  unsigned char infoIndices[128];
  unsigned short resultIndices[1024];
  dcgmDiagTestAuxData_v1 auxData;
} dcgmDiagTestRun_v2;
typedef struct { dcgmGroupEntityPair_t entity; char serialNum[DCGM_MAX_STR_LENGTH]; char skuDeviceId[5]; } dcgmDiagEntity_v1;
typedef struct {
  dcgmGroupEntityPair_t entity;
  unsigned int code, category, severity;
  char msg[512];
  unsigned int testId;
} dcgmDiagError_v1;
typedef struct { dcgmGroupEntityPair_t entity; char msg[512]; unsigned int testId; } dcgmDiagInfo_v1;
typedef struct { dcgmGroupEntityPair_t entity; dcgmDiagResult_t result; unsigned int testId; } dcgmDiagEntityResult_v1;
typedef struct {
  unsigned int version;
  unsigned char numTests, numErrors, numInfo, numCategories;
  unsigned short numEntities, numResults;
  dcgmDiagTestRun_v2 tests[20];
  dcgmDiagEntity_v1 entities[1024];
  dcgmDiagError_v1 errors[32];
  dcgmDiagInfo_v1 info[128];
  dcgmDiagEntityResult_v1 results[20 * 1024];
  char categories[5][20];
  char dcgmVersion[12];
  char driverVersion[DCGM_MAX_STR_LENGTH];
  char _unused[621952];
} dcgmDiagResponse_v12;
#define dcgmDiagResponse_version12 MAKE_DCGM_VERSION(dcgmDiagResponse_v12, 12)
_Static_assert(sizeof(dcgmDiagTestRun_v2) == 4336, "dcgmDiagTestRun_v2");
_Static_assert(sizeof(dcgmDiagResponse_v12) == 1399484, "dcgmDiagResponse_v12");
#define DCGM_SOFTWARE_INDEX 15

/* NVML (section 5) */
typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9, NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13, NVML_ERROR_GPU_IS_LOST = 15, NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25
};
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

/* v3 is v2 plus healthSummary at the end: the shared members, listed once. */
#define NVML_GPU_FABRIC_INFO_V2_MEMBERS \
  unsigned int version;                 \
  unsigned char clusterUuid[16];        \
  nvmlReturn_t status;                  \
  unsigned int cliqueId;                \
  unsigned char state;                  \
  unsigned int healthMask;

typedef struct {
  NVML_GPU_FABRIC_INFO_V2_MEMBERS
} nvmlGpuFabricInfo_v2_t;
_Static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "nvmlGpuFabricInfo_v2_t");

typedef struct {
  NVML_GPU_FABRIC_INFO_V2_MEMBERS
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
_Static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40, "nvmlGpuFabricInfo_v3_t");
/* nvmlPciInfo_t: NVIDIA/go-nvml pkg/nvml/nvml.h (CUDA 13 nvml.h), filled by nvmlDeviceGetPciInfo_v3. */
typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t");

/* nvmlFieldValue_t: NVIDIA/go-nvml gen/nvml/nvml.h (nvmlDeviceGetFieldValues); value is an 8-byte union. */
typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union { double dVal; unsigned int uiVal; unsigned long ulVal; unsigned long long ullVal; long long sllVal; } value;
} nvmlFieldValue_t;
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");
_Static_assert(__builtin_offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t.valueType");
_Static_assert(__builtin_offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t.value");
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
#define NVML_VALUE_TYPE_UNSIGNED_INT 1

#define NVML_STRUCT_VERSION(data, ver) ((unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U)))
#define nvmlGpuFabricInfo_v2 NVML_STRUCT_VERSION(GpuFabricInfo, 2)
#define nvmlGpuFabricInfo_v3 NVML_STRUCT_VERSION(GpuFabricInfo, 3)

#endif
