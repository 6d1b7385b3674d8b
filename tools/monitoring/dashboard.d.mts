export interface PanelQuery {
  readonly expr: string
  readonly legendFormat: string
}
export interface PanelSpec {
  readonly title: string
  readonly type: string
  readonly w: number
  readonly h: number
  readonly alert: string | null
  readonly description: string
  readonly unit?: string
  readonly max?: number
  readonly queries: ReadonlyArray<PanelQuery>
}
export declare const ROWS: ReadonlyArray<{
  readonly title: string
  readonly panels: ReadonlyArray<PanelSpec>
}>
export declare const VARIABLES: ReadonlyArray<{
  readonly name: string
  readonly label: string
  readonly metric: string
  readonly labelName: string
}>
export declare function dashboard(): Record<string, unknown>
