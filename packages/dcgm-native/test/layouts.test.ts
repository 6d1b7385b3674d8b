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

type StructType = Parameters<typeof koffi.sizeof>[0]

/** What one struct must measure: its size and alignment where given, and each named member's offset. */
interface StructLayout {
  readonly type: StructType
  readonly size?: number
  readonly align?: number
  readonly offsets?: Readonly<Record<string, number>>
}

/** The documented numbers of a layout, without its type. */
const documented = ({ type: _, offsets = {}, ...rest }: StructLayout) => ({ ...rest, offsets })
/** What koffi computes for each number the layout documents. */
const measured = ({ type, size, align, offsets = {} }: StructLayout) => ({
  ...(size === undefined ? {} : { size: koffi.sizeof(type) }),
  ...(align === undefined ? {} : { align: koffi.alignof(type) }),
  offsets: Object.fromEntries(Object.keys(offsets).map((member) => [member, koffi.offsetof(type, member)]))
})

/** One test per row: every struct of the row measures as documented. */
const layoutTests = (rows: ReadonlyArray<readonly [title: string, structs: ReadonlyArray<StructLayout>]>) =>
  it.each(rows)("%s", (_title, structs) => {
    for (const struct of structs) expect(measured(struct)).toEqual(documented(struct))
  })

describe("DCGM layouts", () => {
  layoutTests([
    [
      "dcgmPolicy_t: 144 bytes, parms at 32, params 16 bytes with the union at 8",
      [
        { type: Policy, size: 144, align: 8, offsets: { response: 24, parms: 32 } },
        { type: PolicyConditionParams, size: 16, offsets: { val: 8 } }
      ]
    ],
    [
      "dcgmPolicyCallbackResponse_v2: 32 bytes, val at 8, gpuId at 24",
      [{ type: PolicyCallbackResponse, size: 32, align: 8, offsets: { condition: 4, val: 8, gpuId: 24 } }]
    ],
    [
      "union members: 16 bytes, timestamp at 0",
      [
        { type: PolicyConditionDbe, size: 16, offsets: { location: 8, numerrors: 12 } },
        { type: PolicyConditionMpr, offsets: { dbepages: 12 } },
        { type: PolicyConditionNvlink, offsets: { fieldId: 8, counter: 12 } },
        { type: PolicyConditionXid, size: 16, offsets: { errnum: 8 } }
      ]
    ],
    [
      "dcgmFieldValue_v1: 4120 bytes, ts at 16, value at 24",
      [
        {
          type: FieldValueV1,
          size: 4120,
          offsets: { fieldId: 4, fieldType: 6, status: 8, ts: 16, value: 24 }
        }
      ]
    ],
    [
      "dcgmFieldValue_v2: 4128 bytes, fieldId at 12, status at 16, ts at 24, value at 32",
      [
        {
          type: FieldValueV2,
          size: 4128,
          offsets: {
            entityGroupId: 4,
            entityId: 8,
            fieldId: 12,
            fieldType: 14,
            status: 16,
            ts: 24,
            value: 32
          }
        }
      ]
    ],
    [
      "connection parameter structs",
      [
        { type: ConnectV2Params, size: 16, offsets: { addressIsUnixSocket: 12 } },
        { type: HostengineHealth, size: 8 }
      ]
    ]
  ])
})

describe("DCGM health response (dcgm_structs.h v4.6.0, derivation in src/layouts.ts)", () => {
  layoutTests([
    [
      "dcgmDiagErrorDetail_t: msg[1024] then code at 1024, 1028 bytes",
      [{ type: DiagErrorDetail, size: 1028, offsets: { code: 1024 } }]
    ],
    [
      "dcgmIncidentInfo_t: 1044 bytes, error at 8, entityInfo at 1036",
      [{ type: IncidentInfo, size: 1044, align: 4, offsets: { health: 4, error: 8, entityInfo: 1036 } }]
    ],
    [
      "dcgmHealthResponse_v5: incidents at 12, 1024 slots, 1,069,068 bytes",
      [
        {
          type: HealthResponseV5,
          size: 1_069_068,
          offsets: { overallHealth: 4, incidentCount: 8, incidents: 12 }
        }
      ]
    ]
  ])
})

describe("DCGM diag response (dcgm_structs.h v4.6.0, derivation in src/layouts.ts)", () => {
  layoutTests([
    [
      "dcgmDiagTestRun_v2: 4336 bytes, resultIndices at 234, auxData at 2284",
      [
        {
          type: DiagTestRunV2,
          size: 4336,
          offsets: {
            result: 64,
            numResults: 72,
            errorIndices: 74,
            infoIndices: 106,
            resultIndices: 234,
            auxData: 2284
          }
        }
      ]
    ],
    [
      "per-entity records",
      [
        { type: DiagEntityV1, size: 272 },
        { type: DiagErrorV1, size: 536, offsets: { msg: 20, testId: 532 } },
        { type: DiagInfoV1, size: 524 },
        { type: DiagEntityResultV1, size: 16, offsets: { testId: 12 } }
      ]
    ],
    [
      "dcgmDiagResponse_v12: 1,399,484 bytes (as v11), arrays at the header's offsets",
      [
        {
          type: DiagResponseV12,
          size: 1_399_484,
          offsets: {
            numEntities: 8,
            numResults: 10,
            tests: 12,
            entities: 86_732,
            errors: 365_260,
            info: 382_412,
            results: 449_484,
            categories: 777_164,
            dcgmVersion: 777_264,
            driverVersion: 777_276
          }
        }
      ]
    ]
  ])
})

describe("NVML layouts", () => {
  layoutTests([
    [
      "nvmlPciInfo_t (nvml.h, nvmlDeviceGetPciInfo_v3): 68 bytes, busId at 36",
      [
        {
          type: NvmlPciInfo,
          size: 68,
          align: 4,
          offsets: { domain: 16, bus: 20, device: 24, pciDeviceId: 28, pciSubSystemId: 32, busId: 36 }
        }
      ]
    ],
    [
      "nvmlEventData_t: 32 bytes",
      [
        {
          type: NvmlEventData,
          size: 32,
          offsets: { eventType: 8, eventData: 16, gpuInstanceId: 24, computeInstanceId: 28 }
        }
      ]
    ],
    [
      "nvmlGpuFabricInfo v2 (36 bytes) and v3 (40 bytes)",
      [
        {
          type: NvmlGpuFabricInfoV2,
          size: 36,
          offsets: { clusterUuid: 4, status: 20, cliqueId: 24, state: 28, healthMask: 32 }
        },
        { type: NvmlGpuFabricInfoV3, size: 40, offsets: { healthSummary: 36 } }
      ]
    ]
  ])
})
