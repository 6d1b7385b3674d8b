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

/** Version constants computed as the vendor macros do. */
export const StructVersion = {
  connectV2Params: structVersion(koffi.sizeof(ConnectV2Params), 2),
  hostengineHealth: structVersion(koffi.sizeof(HostengineHealth), 1),
  policy: structVersion(koffi.sizeof(Policy), 1),
  policyCallbackResponse: structVersion(koffi.sizeof(PolicyCallbackResponse), 2),
  fieldValueV1: structVersion(koffi.sizeof(FieldValueV1), 1),
  fieldValueV2: structVersion(koffi.sizeof(FieldValueV2), 2),
  nvmlGpuFabricInfoV2: structVersion(koffi.sizeof(NvmlGpuFabricInfoV2), 2),
  nvmlGpuFabricInfoV3: structVersion(koffi.sizeof(NvmlGpuFabricInfoV3), 3)
} as const
