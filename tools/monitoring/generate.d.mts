export declare const MONITORING_DIR: string
export declare const CHART_DIR: string
export declare const ALERTS_SOURCE: string
export declare const RULE_TEMPLATE: string
export declare function ruleTemplate(source: string): string
export declare function generated(): { path: string; text: string }[]
export declare function stale(): string[]
export declare const DASHBOARD_FILE: string
export declare const CHART_DASHBOARD_FILE: string
export declare function dashboardText(): string
