export declare const MONITORING_DIR: string
export declare const CHART_DIR: string
export declare const ALERTS_SOURCE: string
export declare const RULE_TEMPLATE: string
export declare function ruleTemplate(source: string): string
export declare function generated(): { path: string; text: string }[]
export declare function stale(): string[]
