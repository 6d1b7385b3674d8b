/** The events.k8s.io/v1 Events about a Node (the agent records them in "default", regarding the Node). */
import type { EventsV1Api, EventsV1Event } from "@kubernetes/client-node"

export const nodeEvents = async (events: EventsV1Api, nodeName: string): Promise<EventsV1Event[]> =>
  (await events.listNamespacedEvent({ namespace: "default", fieldSelector: `regarding.name=${nodeName}` }))
    .items
