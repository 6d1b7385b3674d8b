/** Paged lists that survive an expired continue token: the shared client's (`@nodemend/kube-access`, ADR 0011). */
export { ListExpired, listAllPages, MAX_LIST_RESTARTS } from "@nodemend/kube-access"
