export type KindPhasePlan = { run: true; reason?: undefined } | { run: false; reason: string }
export declare function kindPhasePlan(machine: {
  disabled: boolean
  platform: string
  root: boolean
  docker: boolean
  podman: boolean
  imageCached: boolean
}): KindPhasePlan
export declare function probeKindPhase(env?: NodeJS.ProcessEnv): KindPhasePlan
