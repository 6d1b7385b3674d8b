/**
 * koffi types for the DCGM 4.x / NVML structs, built once at module load. All types are anonymous:
 * koffi type names are process-global and a second evaluation of this module (test isolation) would
 * collide. Sizes, offsets and version constants are asserted in test/layouts.test.ts against the
 * numbers in shared/reference/dcgm-nvml.md.
 */
import koffi from "koffi"

/** MAKE_DCGM_VERSION / NVML_STRUCT_VERSION: low 24 bits = struct size, high byte = version. */
export const structVersion = (size: number, version: number): number => (size | (version << 24)) >>> 0

const u32 = "uint32_t"
const i64 = "int64_t"

export const ConnectV2Params = koffi.struct({
  version: u32,
  persistAfterDisconnect: u32,
  timeoutMs: u32,
  addressIsUnixSocket: u32
})
export const HostengineHealth = koffi.struct({ version: u32, overallHealth: u32 })

export const PolicyConditionParams = koffi.struct({
  tag: u32,
  val: koffi.union({ boolean: u32, llval: "uint64_t" })
})
export const Policy = koffi.struct({
  version: u32,
  condition: u32,
  mode: u32,
  isolation: u32,
  action: u32,
  validation: u32,
  response: u32,
  parms: koffi.array(PolicyConditionParams, 7, "Array")
})

export const PolicyConditionDbe = koffi.struct({ timestamp: i64, location: u32, numerrors: u32 })
export const PolicyConditionPci = koffi.struct({ timestamp: i64, counter: u32 })
export const PolicyConditionMpr = koffi.struct({ timestamp: i64, sbepages: u32, dbepages: u32 })
export const PolicyConditionThermal = koffi.struct({ timestamp: i64, thermalViolation: u32 })
export const PolicyConditionPower = koffi.struct({ timestamp: i64, powerViolation: u32 })
export const PolicyConditionNvlink = koffi.struct({ timestamp: i64, fieldId: "uint16_t", counter: u32 })
export const PolicyConditionXid = koffi.struct({ timestamp: i64, errnum: u32 })

export const PolicyCallbackResponseVal = koffi.union({
  dbe: PolicyConditionDbe,
  pci: PolicyConditionPci,
  mpr: PolicyConditionMpr,
  thermal: PolicyConditionThermal,
  power: PolicyConditionPower,
  nvlink: PolicyConditionNvlink,
  xid: PolicyConditionXid
})
export const PolicyCallbackResponse = koffi.struct({
  version: u32,
  condition: u32,
  val: PolicyCallbackResponseVal,
  gpuId: u32
})
/** `int fpRecvUpdates(dcgmPolicyCallbackResponse_v2 *response, uint64_t userData)`; the pointer arrives as BigInt. */
export const PolicyCallbackProto = koffi.proto("int", ["void *", "uint64_t"])

const FieldValueUnion = koffi.union({
  i64,
  dbl: "double",
  str: koffi.array("char", 256),
  blob: koffi.array("uint8_t", 4096)
})
export const FieldValueV1 = koffi.struct({
  version: u32,
  fieldId: "uint16_t",
  fieldType: "uint16_t",
  status: "int32_t",
  ts: i64,
  value: FieldValueUnion
})
export const FieldValueV2 = koffi.struct({
  version: u32,
  entityGroupId: u32,
  entityId: u32,
  fieldId: "uint16_t",
  fieldType: "uint16_t",
  status: "int32_t",
  unused: u32,
  ts: i64,
  value: FieldValueUnion
})
export const GroupEntityPair = koffi.struct({ entityGroupId: u32, entityId: u32 })
/** `int (*)(entityGroupId, entityId, dcgmFieldValue_v1 *values, int numValues, void *userData)` */
export const FieldValueEntityEnumerationProto = koffi.proto("int", [u32, u32, "void *", "int", "void *"])

export const NvmlEventData = koffi.struct({
  device: "void *",
  eventType: "uint64_t",
  eventData: "uint64_t",
  gpuInstanceId: u32,
  computeInstanceId: u32
})
export const NvmlGpuFabricInfoV2 = koffi.struct({
  version: u32,
  clusterUuid: koffi.array("uint8_t", 16, "Array"),
  status: "int32_t",
  cliqueId: u32,
  state: "uint8_t",
  healthMask: u32
})
export const NvmlGpuFabricInfoV3 = koffi.struct({
  version: u32,
  clusterUuid: koffi.array("uint8_t", 16, "Array"),
  status: "int32_t",
  cliqueId: u32,
  state: "uint8_t",
  healthMask: u32,
  healthSummary: "uint8_t"
})

/*
 * DCGM health check response, DCGM 4.x (NVIDIA/DCGM tag v4.6.0, commit 51b65cce, dcgmlib/dcgm_structs.h).
 * Not in the reference; derived from the header (LP64, natural alignment, every member 4-byte aligned):
 *   dcgmDiagErrorDetail_t  { char msg[1024]; unsigned int code; }                      msg @0, code @1024, size 1028
 *   dcgmIncidentInfo_t     { dcgmHealthSystems_t system; dcgmHealthWatchResults_t health;
 *                            dcgmDiagErrorDetail_t error; dcgmGroupEntityPair_t entityInfo; }
 *                          system @0, health @4, error @8, entityInfo @1036 (8 + 1028), size 1044
 *   dcgmHealthResponse_v5  { unsigned int version; dcgmHealthWatchResults_t overallHealth;
 *                            unsigned int incidentCount;
 *                            dcgmIncidentInfo_t incidents[DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2]; }
 *                          DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2 = DCGM_GROUP_MAX_ENTITIES_V2 = 1024
 *                          version @0, overallHealth @4, incidentCount @8, incidents @12,
 *                          size 12 + 1024 * 1044 = 1,069,068 (0x10500C)
 *   dcgmHealthResponse_version5 = MAKE_DCGM_VERSION(dcgmHealthResponse_v5, 5) = 0x10500C | 5 << 24 = 0x0510500C
 * (The incident's message is dcgmDiagErrorDetail_t's 1024 bytes, not DCGM_ERR_MSG_LENGTH = 512 of the _v2 detail.)
 */
export const DCGM_HEALTH_WATCH_MAX_INCIDENTS = 1024
export const DiagErrorDetail = koffi.struct({ msg: koffi.array("char", 1024), code: u32 })
export const IncidentInfo = koffi.struct({
  system: u32,
  health: u32,
  error: DiagErrorDetail,
  entityInfo: GroupEntityPair
})
export const HealthResponseV5 = koffi.struct({
  version: u32,
  overallHealth: u32,
  incidentCount: u32,
  incidents: koffi.array(IncidentInfo, DCGM_HEALTH_WATCH_MAX_INCIDENTS, "Array")
})

/*
 * Active diagnostics response, DCGM 4.2+ (NVIDIA/DCGM tag v4.6.0, dcgmlib/dcgm_structs.h), as go-dcgm's
 * RunDiag passes it to dcgmRunDiagnostic. Derived from the header (LP64) and checked by compiling the
 * vendor header with gcc (x86-64) at that tag:
 *   dcgmDiagTestRun_v2      name[32] @0, pluginName[32] @32, result @64, numErrors/numInfo/categoryIndex/_unused
 *                           u8 @68..71, numResults u16 @72, errorIndices u8[32] @74, infoIndices u8[128] @106,
 *                           resultIndices u16[1024] @234, auxData {version u32, data[2048]} @2284 (4-aligned),
 *                           size 4336
 *   dcgmDiagEntity_v1       entity @0, serialNum[256] @8, skuDeviceId[5] @264, size 272 (269 padded to 4)
 *   dcgmDiagError_v1        entity @0, code @8, category @12, severity @16, msg[512] @20, testId @532, size 536
 *   dcgmDiagInfo_v1         entity @0, msg[512] @8, testId @520, size 524
 *   dcgmDiagEntityResult_v1 entity @0, result @8, testId @12, size 16
 *   dcgmDiagResponse_v12    version @0, numTests/numErrors/numInfo/numCategories u8 @4..7, numEntities u16 @8,
 *                           numResults u16 @10, tests[20] @12, entities[1024] @86732, errors[32] @365260,
 *                           info[128] @382412, results[20 * 1024] @449484, categories[5][20] @777164,
 *                           dcgmVersion[12] @777264, driverVersion[256] @777276, _unused[621952] @777532,
 *                           size 1,399,484 (= sizeof dcgmDiagResponse_v11, which the padding keeps equal)
 *   dcgmDiagResponse_version12 = MAKE_DCGM_VERSION(dcgmDiagResponse_v12, 12) = 0x0C155ABC
 */
export const DIAG_RESPONSE_TESTS_MAX = 20
export const DIAG_RESPONSE_ENTITIES_MAX = 1024
export const DIAG_RESPONSE_ERRORS_MAX = 32
export const DIAG_RESPONSE_INFO_MAX = 128
export const DIAG_RESPONSE_RESULTS_MAX = DIAG_RESPONSE_TESTS_MAX * DIAG_RESPONSE_ENTITIES_MAX
export const DiagTestRunV2 = koffi.struct({
  name: koffi.array("char", 32),
  pluginName: koffi.array("char", 32),
  result: u32,
  numErrors: "uint8_t",
  numInfo: "uint8_t",
  categoryIndex: "uint8_t",
  _unused: "uint8_t",
  numResults: "uint16_t",
  errorIndices: koffi.array("uint8_t", 32, "Array"),
  infoIndices: koffi.array("uint8_t", 128, "Array"),
  resultIndices: koffi.array("uint16_t", DIAG_RESPONSE_ENTITIES_MAX, "Array"),
  auxData: koffi.struct({ version: u32, data: koffi.array("char", 2048) })
})
export const DiagEntityV1 = koffi.struct({
  entity: GroupEntityPair,
  serialNum: koffi.array("char", 256),
  skuDeviceId: koffi.array("char", 5)
})
export const DiagErrorV1 = koffi.struct({
  entity: GroupEntityPair,
  code: u32,
  category: u32,
  severity: u32,
  msg: koffi.array("char", 512),
  testId: u32
})
export const DiagInfoV1 = koffi.struct({
  entity: GroupEntityPair,
  msg: koffi.array("char", 512),
  testId: u32
})
export const DiagEntityResultV1 = koffi.struct({ entity: GroupEntityPair, result: u32, testId: u32 })
export const DiagResponseV12 = koffi.struct({
  version: u32,
  numTests: "uint8_t",
  numErrors: "uint8_t",
  numInfo: "uint8_t",
  numCategories: "uint8_t",
  numEntities: "uint16_t",
  numResults: "uint16_t",
  tests: koffi.array(DiagTestRunV2, DIAG_RESPONSE_TESTS_MAX, "Array"),
  entities: koffi.array(DiagEntityV1, DIAG_RESPONSE_ENTITIES_MAX, "Array"),
  errors: koffi.array(DiagErrorV1, DIAG_RESPONSE_ERRORS_MAX, "Array"),
  info: koffi.array(DiagInfoV1, DIAG_RESPONSE_INFO_MAX, "Array"),
  results: koffi.array(DiagEntityResultV1, DIAG_RESPONSE_RESULTS_MAX, "Array"),
  categories: koffi.array(koffi.array("char", 20), 5, "Array"),
  dcgmVersion: koffi.array("char", 12),
  driverVersion: koffi.array("char", 256),
  _unused: koffi.array("uint8_t", 621952, "Typed")
})

/*
 * nvmlPciInfo_t, as filled by nvmlDeviceGetPciInfo_v3 (NVIDIA/go-nvml commit 2f9e261, pkg/nvml/nvml.h, synced
 * from the CUDA 13 nvml.h; the struct carries no version field):
 *   char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16] @0; unsigned int domain @16, bus @20,
 *   device @24, pciDeviceId @28, pciSubSystemId @32; char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32] @36;
 *   size 68, alignment 4.
 */
export const NvmlPciInfo = koffi.struct({
  busIdLegacy: koffi.array("char", 16),
  domain: u32,
  bus: u32,
  device: u32,
  pciDeviceId: u32,
  pciSubSystemId: u32,
  busId: koffi.array("char", 32)
})

/** Version constants computed as the vendor macros do. */
export const StructVersion = {
  connectV2Params: structVersion(koffi.sizeof(ConnectV2Params), 2),
  hostengineHealth: structVersion(koffi.sizeof(HostengineHealth), 1),
  policy: structVersion(koffi.sizeof(Policy), 1),
  policyCallbackResponse: structVersion(koffi.sizeof(PolicyCallbackResponse), 2),
  fieldValueV1: structVersion(koffi.sizeof(FieldValueV1), 1),
  fieldValueV2: structVersion(koffi.sizeof(FieldValueV2), 2),
  healthResponseV5: structVersion(koffi.sizeof(HealthResponseV5), 5),
  diagResponseV12: structVersion(koffi.sizeof(DiagResponseV12), 12),
  nvmlGpuFabricInfoV2: structVersion(koffi.sizeof(NvmlGpuFabricInfoV2), 2),
  nvmlGpuFabricInfoV3: structVersion(koffi.sizeof(NvmlGpuFabricInfoV3), 3)
} as const
