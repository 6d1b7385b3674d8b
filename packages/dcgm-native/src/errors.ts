/** Every failure of this package, as a tagged error. */
import { Data } from "effect"

/** The shared library could not be loaded (absent, wrong architecture, unresolved symbols). */
export class LibraryMissing extends Data.TaggedError("LibraryMissing")<{
  readonly library: "dcgm" | "nvml"
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return `library missing: ${this.library} (${this.path}): ${this.detail}`
  }
}

/** The library is present but speaks another ABI (DCGM 3.x without dcgmPolicyRegister_v2, a struct version refused). */
export class VersionMismatch extends Data.TaggedError("VersionMismatch")<{
  readonly library: "dcgm" | "nvml"
  readonly detail: string
}> {
  override get message(): string {
    return `version mismatch: ${this.library}: ${this.detail}`
  }
}

/** nv-hostengine refused or dropped the connection (or the embedded engine could not start). */
export class ConnectionRefused extends Data.TaggedError("ConnectionRefused")<{
  readonly target: string
  readonly code: number
  readonly detail: string
}> {
  override get message(): string {
    return `connection refused: ${this.target}: ${this.detail} (${this.code})`
  }
}

/** A DCGM call returned an error code. */
export class DcgmCallFailed extends Data.TaggedError("DcgmCallFailed")<{
  readonly call: string
  readonly code: number
  readonly detail: string
}> {
  override get message(): string {
    return `${this.call} failed: ${this.detail} (${this.code})`
  }
}

/** An NVML call returned an error code. */
export class NvmlCallFailed extends Data.TaggedError("NvmlCallFailed")<{
  readonly call: string
  readonly code: number
  readonly detail: string
}> {
  override get message(): string {
    return `${this.call} failed: ${this.detail} (${this.code})`
  }
}

export type DcgmError = LibraryMissing | VersionMismatch | ConnectionRefused | DcgmCallFailed
export type NvmlError = LibraryMissing | VersionMismatch | NvmlCallFailed
