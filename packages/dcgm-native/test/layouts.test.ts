// Struct sizes, offsets and version constants against the numbers documented in
// shared/reference/dcgm-nvml.md (sections 1.2, 1.3, 2.2, 2.4, 3.2, 5).
import koffi from "koffi"
import { describe, expect, it } from "vitest"
import {
  ConnectV2Params,
  DiagEntityResultV1,
  DiagEntityV1,
  DiagErrorDetail,
  DiagErrorV1,
  DiagInfoV1,
  DiagResponseV12,
  DiagTestRunV2,
  HealthResponseV5,
  IncidentInfo,
  NvmlPciInfo,
  FieldValueV1,
  FieldValueV2,
  HostengineHealth,
  NvmlEventData,
  NvmlGpuFabricInfoV2,
  NvmlGpuFabricInfoV3,
  Policy,
  PolicyCallbackResponse,
  PolicyConditionDbe,
  PolicyConditionMpr,
  PolicyConditionNvlink,
  PolicyConditionParams,
  PolicyConditionXid,
  StructVersion,
  structVersion
} from "../src/layouts.ts"

describe("struct versions (MAKE_DCGM_VERSION / NVML_STRUCT_VERSION)", () => {
  it("computes the documented constants", () => {
    expect(StructVersion.policy).toBe(0x01000090)
    expect(StructVersion.policyCallbackResponse).toBe(0x02000020)
    expect(StructVersion.fieldValueV1).toBe(0x01001018)
    expect(StructVersion.fieldValueV2).toBe(0x02001020)
    expect(StructVersion.connectV2Params).toBe(0x02000010)
    expect(StructVersion.hostengineHealth).toBe(0x01000008)
    expect(StructVersion.nvmlGpuFabricInfoV2).toBe(0x02000024)
    expect(StructVersion.nvmlGpuFabricInfoV3).toBe(0x03000028)
    // derived from NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_structs.h (derivation in src/layouts.ts)
    expect(StructVersion.healthResponseV5).toBe(0x0510500c)
    expect(StructVersion.diagResponseV12).toBe(0x0c155abc)
  })
  it("keeps the size in the low 24 bits and the version in the high byte", () => {
    expect(structVersion(24, 1)).toBe(0x01000018) // dcgmPolicyCallbackResponse_version1 (DCGM 3.x)
    expect(structVersion(8968, 2)).toBe(0x02002308) // dcgmCreateFakeEntities_version2
    expect(structVersion(0x10, 255)).toBe(0xff000010)
  })
})

describe("DCGM layouts", () => {
  it("dcgmPolicy_t: 144 bytes, parms at 32, params 16 bytes with the union at 8", () => {
    expect(koffi.sizeof(Policy)).toBe(144)
    expect(koffi.alignof(Policy)).toBe(8)
    expect(koffi.offsetof(Policy, "response")).toBe(24)
    expect(koffi.offsetof(Policy, "parms")).toBe(32)
    expect(koffi.sizeof(PolicyConditionParams)).toBe(16)
    expect(koffi.offsetof(PolicyConditionParams, "val")).toBe(8)
  })
  it("dcgmPolicyCallbackResponse_v2: 32 bytes, val at 8, gpuId at 24", () => {
    expect(koffi.sizeof(PolicyCallbackResponse)).toBe(32)
    expect(koffi.alignof(PolicyCallbackResponse)).toBe(8)
    expect(koffi.offsetof(PolicyCallbackResponse, "condition")).toBe(4)
    expect(koffi.offsetof(PolicyCallbackResponse, "val")).toBe(8)
    expect(koffi.offsetof(PolicyCallbackResponse, "gpuId")).toBe(24)
  })
  it("union members: 16 bytes, timestamp at 0", () => {
    expect(koffi.sizeof(PolicyConditionDbe)).toBe(16)
    expect(koffi.offsetof(PolicyConditionDbe, "location")).toBe(8)
    expect(koffi.offsetof(PolicyConditionDbe, "numerrors")).toBe(12)
    expect(koffi.offsetof(PolicyConditionMpr, "dbepages")).toBe(12)
    expect(koffi.offsetof(PolicyConditionNvlink, "fieldId")).toBe(8)
    expect(koffi.offsetof(PolicyConditionNvlink, "counter")).toBe(12)
    expect(koffi.offsetof(PolicyConditionXid, "errnum")).toBe(8)
    expect(koffi.sizeof(PolicyConditionXid)).toBe(16)
  })
  it("dcgmFieldValue_v1: 4120 bytes, ts at 16, value at 24", () => {
    expect(koffi.sizeof(FieldValueV1)).toBe(4120)
    expect(koffi.offsetof(FieldValueV1, "fieldId")).toBe(4)
    expect(koffi.offsetof(FieldValueV1, "fieldType")).toBe(6)
    expect(koffi.offsetof(FieldValueV1, "status")).toBe(8)
    expect(koffi.offsetof(FieldValueV1, "ts")).toBe(16)
    expect(koffi.offsetof(FieldValueV1, "value")).toBe(24)
  })
  it("dcgmFieldValue_v2: 4128 bytes, fieldId at 12, status at 16, ts at 24, value at 32", () => {
    expect(koffi.sizeof(FieldValueV2)).toBe(4128)
    expect(koffi.offsetof(FieldValueV2, "entityGroupId")).toBe(4)
    expect(koffi.offsetof(FieldValueV2, "entityId")).toBe(8)
    expect(koffi.offsetof(FieldValueV2, "fieldId")).toBe(12)
    expect(koffi.offsetof(FieldValueV2, "fieldType")).toBe(14)
    expect(koffi.offsetof(FieldValueV2, "status")).toBe(16)
    expect(koffi.offsetof(FieldValueV2, "ts")).toBe(24)
    expect(koffi.offsetof(FieldValueV2, "value")).toBe(32)
  })
  it("connection parameter structs", () => {
    expect(koffi.sizeof(ConnectV2Params)).toBe(16)
    expect(koffi.offsetof(ConnectV2Params, "addressIsUnixSocket")).toBe(12)
    expect(koffi.sizeof(HostengineHealth)).toBe(8)
  })
})

describe("DCGM health response (dcgm_structs.h v4.6.0, derivation in src/layouts.ts)", () => {
  it("dcgmDiagErrorDetail_t: msg[1024] then code at 1024, 1028 bytes", () => {
    expect(koffi.sizeof(DiagErrorDetail)).toBe(1028)
    expect(koffi.offsetof(DiagErrorDetail, "code")).toBe(1024)
  })
  it("dcgmIncidentInfo_t: 1044 bytes, error at 8, entityInfo at 1036", () => {
    expect(koffi.sizeof(IncidentInfo)).toBe(1044)
    expect(koffi.alignof(IncidentInfo)).toBe(4)
    expect(koffi.offsetof(IncidentInfo, "health")).toBe(4)
    expect(koffi.offsetof(IncidentInfo, "error")).toBe(8)
    expect(koffi.offsetof(IncidentInfo, "entityInfo")).toBe(1036)
  })
  it("dcgmHealthResponse_v5: incidents at 12, 1024 slots, 1,069,068 bytes", () => {
    expect(koffi.offsetof(HealthResponseV5, "overallHealth")).toBe(4)
    expect(koffi.offsetof(HealthResponseV5, "incidentCount")).toBe(8)
    expect(koffi.offsetof(HealthResponseV5, "incidents")).toBe(12)
    expect(koffi.sizeof(HealthResponseV5)).toBe(1_069_068)
  })
})

describe("DCGM diag response (dcgm_structs.h v4.6.0, derivation in src/layouts.ts)", () => {
  it("dcgmDiagTestRun_v2: 4336 bytes, resultIndices at 234, auxData at 2284", () => {
    expect(koffi.sizeof(DiagTestRunV2)).toBe(4336)
    expect(koffi.offsetof(DiagTestRunV2, "result")).toBe(64)
    expect(koffi.offsetof(DiagTestRunV2, "numResults")).toBe(72)
    expect(koffi.offsetof(DiagTestRunV2, "errorIndices")).toBe(74)
    expect(koffi.offsetof(DiagTestRunV2, "infoIndices")).toBe(106)
    expect(koffi.offsetof(DiagTestRunV2, "resultIndices")).toBe(234)
    expect(koffi.offsetof(DiagTestRunV2, "auxData")).toBe(2284)
  })
  it("per-entity records", () => {
    expect(koffi.sizeof(DiagEntityV1)).toBe(272)
    expect(koffi.sizeof(DiagErrorV1)).toBe(536)
    expect(koffi.offsetof(DiagErrorV1, "msg")).toBe(20)
    expect(koffi.offsetof(DiagErrorV1, "testId")).toBe(532)
    expect(koffi.sizeof(DiagInfoV1)).toBe(524)
    expect(koffi.sizeof(DiagEntityResultV1)).toBe(16)
    expect(koffi.offsetof(DiagEntityResultV1, "testId")).toBe(12)
  })
  it("dcgmDiagResponse_v12: 1,399,484 bytes (as v11), arrays at the header's offsets", () => {
    expect(koffi.offsetof(DiagResponseV12, "numEntities")).toBe(8)
    expect(koffi.offsetof(DiagResponseV12, "numResults")).toBe(10)
    expect(koffi.offsetof(DiagResponseV12, "tests")).toBe(12)
    expect(koffi.offsetof(DiagResponseV12, "entities")).toBe(86_732)
    expect(koffi.offsetof(DiagResponseV12, "errors")).toBe(365_260)
    expect(koffi.offsetof(DiagResponseV12, "info")).toBe(382_412)
    expect(koffi.offsetof(DiagResponseV12, "results")).toBe(449_484)
    expect(koffi.offsetof(DiagResponseV12, "categories")).toBe(777_164)
    expect(koffi.offsetof(DiagResponseV12, "dcgmVersion")).toBe(777_264)
    expect(koffi.offsetof(DiagResponseV12, "driverVersion")).toBe(777_276)
    expect(koffi.sizeof(DiagResponseV12)).toBe(1_399_484)
  })
})

describe("NVML layouts", () => {
  it("nvmlPciInfo_t (nvml.h, nvmlDeviceGetPciInfo_v3): 68 bytes, busId at 36", () => {
    expect(koffi.sizeof(NvmlPciInfo)).toBe(68)
    expect(koffi.alignof(NvmlPciInfo)).toBe(4)
    expect(koffi.offsetof(NvmlPciInfo, "domain")).toBe(16)
    expect(koffi.offsetof(NvmlPciInfo, "bus")).toBe(20)
    expect(koffi.offsetof(NvmlPciInfo, "device")).toBe(24)
    expect(koffi.offsetof(NvmlPciInfo, "pciDeviceId")).toBe(28)
    expect(koffi.offsetof(NvmlPciInfo, "pciSubSystemId")).toBe(32)
    expect(koffi.offsetof(NvmlPciInfo, "busId")).toBe(36)
  })
  it("nvmlEventData_t: 32 bytes", () => {
    expect(koffi.sizeof(NvmlEventData)).toBe(32)
    expect(koffi.offsetof(NvmlEventData, "eventType")).toBe(8)
    expect(koffi.offsetof(NvmlEventData, "eventData")).toBe(16)
    expect(koffi.offsetof(NvmlEventData, "gpuInstanceId")).toBe(24)
    expect(koffi.offsetof(NvmlEventData, "computeInstanceId")).toBe(28)
  })
  it("nvmlGpuFabricInfo v2 (36 bytes) and v3 (40 bytes)", () => {
    expect(koffi.sizeof(NvmlGpuFabricInfoV2)).toBe(36)
    expect(koffi.offsetof(NvmlGpuFabricInfoV2, "clusterUuid")).toBe(4)
    expect(koffi.offsetof(NvmlGpuFabricInfoV2, "status")).toBe(20)
    expect(koffi.offsetof(NvmlGpuFabricInfoV2, "cliqueId")).toBe(24)
    expect(koffi.offsetof(NvmlGpuFabricInfoV2, "state")).toBe(28)
    expect(koffi.offsetof(NvmlGpuFabricInfoV2, "healthMask")).toBe(32)
    expect(koffi.sizeof(NvmlGpuFabricInfoV3)).toBe(40)
    expect(koffi.offsetof(NvmlGpuFabricInfoV3, "healthSummary")).toBe(36)
  })
})
