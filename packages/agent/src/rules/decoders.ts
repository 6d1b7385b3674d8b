/**
 * Named decoders a rule may require (`decoder: <name>`): a match fires only when the decoder, reading the
 * pattern's named groups, says the line means the rule's reason. For telemetry whose meaning is in register bits
 * a regex cannot read (vendor decode tables); the table is data in a module of its own (nvlink5-decode.ts).
 */
import { nvlink5NeedsReset } from "./nvlink5-decode.ts"

export interface RuleDecoder {
  /** Named groups the pattern must have. */
  readonly groups: readonly string[]
  readonly fires: (groups: Readonly<Record<string, string>>) => boolean
}

export const RULE_DECODERS: Readonly<Record<string, RuleDecoder>> = {
  /** NVIDIA's "XID 144-150 Decode": the XID's intrInfo and errorStatus registers decode to RESET_GPU. */
  "nvidia-nvlink5-reset-gpu": { groups: ["code", "intrInfo", "errorStatus"], fires: nvlink5NeedsReset }
}
