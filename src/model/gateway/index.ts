// The Gateway API front end (issue 28): GatewayClass, Gateway, HTTPRoute and ReferenceGrant from
// the store → the core's servers, locations and backends (../core/types.ts). Nothing is built here
// yet. Its contract, held by test/unit/architecture.test.ts: it imports the core (../core/) and the
// shared checks (../checks/), never the Ingress front end (../ingress/), which never imports it;
// nothing in the core or the checks imports it; the model's entry (../build.ts) runs it beside the
// Ingress front end.
export {};
