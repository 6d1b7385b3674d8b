/** The parts of a Pod a drain reads (built by kube/views.ts). */
export interface TolerationView {
  readonly key?: string
  readonly operator?: string
  readonly value?: string
  readonly effect?: string
}

export interface PodView {
  readonly namespace: string
  readonly name: string
  readonly uid: string
  readonly phase?: string
  readonly priorityClassName?: string
  readonly ownerKinds: ReadonlyArray<string>
  readonly mirror: boolean
  readonly tolerations: ReadonlyArray<TolerationView>
  /** Epoch ms of deletionTimestamp. */
  readonly deletingSince?: number
}
