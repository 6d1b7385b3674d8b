/** Trial counts (bounded for CI, long behind NODEMEND_RELIABILITY_LONG=1) and where trials report figures. */
import { appendFileSync } from "node:fs"

/** Long variants (hundreds of trials) run only with NODEMEND_RELIABILITY_LONG=1; CI runs the bounded ones. */
export const LONG = process.env.NODEMEND_RELIABILITY_LONG === "1"
export const pick = <T>(ci: T, long: T): T => (LONG ? long : ci)

/** Prints a trial's figures; with NODEMEND_RELIABILITY_FIGURES=<file> also appends them there (JSON lines). */
export const recordFigures = (name: string, figures: Record<string, unknown>) => {
  const line = JSON.stringify({ name, long: LONG, at: new Date().toISOString(), ...figures })
  console.log(`RELIABILITY ${line}`)
  const file = process.env.NODEMEND_RELIABILITY_FIGURES
  if (file !== undefined && file !== "") {
    appendFileSync(file, `${line}\n`)
  }
}
