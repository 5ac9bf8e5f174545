/** Names this process in what it sends (the pod name on Kubernetes). */
export const REPLICA = Symbol('replica');
