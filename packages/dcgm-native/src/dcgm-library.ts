/** The libdcgm.so.4 functions this package calls, declared once per load. */
import koffi, { type LibraryHandle } from "koffi"
import { Effect } from "effect"
import { LibraryMissing, VersionMismatch } from "./errors.ts"
import {
  ConnectV2Params,
  FieldValueEntityEnumerationProto,
  HostengineHealth,
  Policy,
  PolicyCallbackProto
} from "./layouts.ts"
import { type NativeFunction, optionalFunc } from "./native-call.ts"

export const DEFAULT_DCGM_LIBRARY = "libdcgm.so.4"

export interface DcgmFunctions {
  readonly path: string
  readonly dcgmInit: NativeFunction
  readonly dcgmShutdown: NativeFunction
  readonly dcgmStartEmbedded: NativeFunction
  readonly dcgmStopEmbedded: NativeFunction
  readonly dcgmConnect_v2: NativeFunction
  readonly dcgmDisconnect: NativeFunction
  readonly errorString: NativeFunction
  readonly dcgmHostengineIsHealthy: NativeFunction | undefined
  readonly dcgmGetAllDevices: NativeFunction
  readonly dcgmPolicySet: NativeFunction
  readonly dcgmPolicyRegister_v2: NativeFunction
  readonly dcgmPolicyUnregister: NativeFunction
  readonly dcgmFieldGroupCreate: NativeFunction
  readonly dcgmFieldGroupDestroy: NativeFunction
  readonly dcgmWatchFields: NativeFunction
  readonly dcgmUnwatchFields: NativeFunction
  readonly dcgmUpdateAllFields: NativeFunction
  readonly dcgmEntitiesGetLatestValues: NativeFunction
  readonly dcgmGetValuesSince_v2: NativeFunction
  readonly dcgmHealthSet: NativeFunction
  readonly dcgmHealthGet: NativeFunction
  readonly dcgmHealthCheck: NativeFunction
  /** Absent from builds without the diag module's client API (feature-detected). */
  readonly dcgmRunDiagnostic: NativeFunction | undefined
}

const H = "uintptr_t"
const outHandle = koffi.out(koffi.pointer("uintptr_t"))

/** Loads the library and declares its functions; fails with LibraryMissing / VersionMismatch. */
export const loadDcgm = (path: string): Effect.Effect<DcgmFunctions, LibraryMissing | VersionMismatch> =>
  Effect.suspend((): Effect.Effect<DcgmFunctions, LibraryMissing | VersionMismatch> => {
    let lib: LibraryHandle
    try {
      lib = koffi.load(path)
    } catch (e) {
      return Effect.fail(
        new LibraryMissing({ library: "dcgm", path, detail: String((e as Error).message ?? e) })
      )
    }
    const register = optionalFunc(lib, "dcgmPolicyRegister_v2", "int", [
      H,
      H,
      "uint32_t",
      koffi.pointer(PolicyCallbackProto),
      "uint64_t"
    ])
    if (register === undefined) {
      const legacy = optionalFunc(lib, "dcgmPolicyRegister", "int", [H, H, "uint32_t", "void *", "void *"])
      return Effect.fail(
        new VersionMismatch({
          library: "dcgm",
          detail:
            legacy !== undefined
              ? `${path} is DCGM 3.x (dcgmPolicyRegister without _v2); DCGM 4.x is required`
              : `${path} does not export dcgmPolicyRegister_v2`
        })
      )
    }
    try {
      return Effect.succeed<DcgmFunctions>({
        path,
        dcgmInit: lib.func("dcgmInit", "int", []),
        dcgmShutdown: lib.func("dcgmShutdown", "int", []),
        dcgmStartEmbedded: lib.func("dcgmStartEmbedded", "int", ["uint32_t", outHandle]),
        dcgmStopEmbedded: lib.func("dcgmStopEmbedded", "int", [H]),
        dcgmConnect_v2: lib.func("dcgmConnect_v2", "int", [
          "const char *",
          koffi.inout(koffi.pointer(ConnectV2Params)),
          outHandle
        ]),
        dcgmDisconnect: lib.func("dcgmDisconnect", "int", [H]),
        errorString: lib.func("errorString", "const char *", ["int"]),
        dcgmHostengineIsHealthy: optionalFunc(lib, "dcgmHostengineIsHealthy", "int", [
          H,
          koffi.inout(koffi.pointer(HostengineHealth))
        ]),
        dcgmGetAllDevices: lib.func("dcgmGetAllDevices", "int", [
          H,
          "uint32_t *",
          koffi.out(koffi.pointer("int"))
        ]),
        dcgmPolicySet: lib.func("dcgmPolicySet", "int", [H, H, koffi.pointer(Policy), H]),
        dcgmPolicyRegister_v2: register,
        dcgmPolicyUnregister: lib.func("dcgmPolicyUnregister", "int", [H, H, "uint32_t"]),
        dcgmFieldGroupCreate: lib.func("dcgmFieldGroupCreate", "int", [
          H,
          "int",
          "uint16_t *",
          "const char *",
          outHandle
        ]),
        dcgmFieldGroupDestroy: lib.func("dcgmFieldGroupDestroy", "int", [H, H]),
        dcgmWatchFields: lib.func("dcgmWatchFields", "int", [H, H, H, "int64_t", "double", "int"]),
        dcgmUnwatchFields: lib.func("dcgmUnwatchFields", "int", [H, H, H]),
        dcgmUpdateAllFields: lib.func("dcgmUpdateAllFields", "int", [H, "int"]),
        dcgmEntitiesGetLatestValues: lib.func("dcgmEntitiesGetLatestValues", "int", [
          H,
          "void *",
          "uint32_t",
          "uint16_t *",
          "uint32_t",
          "uint32_t",
          "void *"
        ]),
        dcgmGetValuesSince_v2: lib.func("dcgmGetValuesSince_v2", "int", [
          H,
          H,
          H,
          "int64_t",
          koffi.out(koffi.pointer("int64_t")),
          koffi.pointer(FieldValueEntityEnumerationProto),
          "void *"
        ]),
        dcgmHealthSet: lib.func("dcgmHealthSet", "int", [H, H, "uint32_t"]),
        dcgmHealthGet: lib.func("dcgmHealthGet", "int", [H, H, koffi.out(koffi.pointer("uint32_t"))]),
        // dcgmHealthResponse_v5 is ~1 MB: passed as a raw buffer and decoded lazily (health-response.ts)
        dcgmHealthCheck: lib.func("dcgmHealthCheck", "int", [H, H, "void *"]),
        // dcgmDiagResponse_v12 is ~1.4 MB: raw buffer, decoded lazily (diag-response.ts)
        dcgmRunDiagnostic: optionalFunc(lib, "dcgmRunDiagnostic", "int", [H, H, "uint32_t", "void *"])
      })
    } catch (e) {
      return Effect.fail(
        new VersionMismatch({ library: "dcgm", detail: `${path}: ${String((e as Error).message ?? e)}` })
      )
    }
  })
